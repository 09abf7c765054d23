import mysql from 'mysql2/promise';
import { openStorage } from '/work/main/dist/src/storage/index.js';
const url = 'mysql://wikistore_test:wikistore_test@127.0.0.1:3306/wikistore_qbench';
const storage = await openStorage({ backend: 'mariadb', url, pool_size: 10 });
const domain = 'q.example';
const schema = { table: 'bench_q', attributes: { p: 'string', i: 'int', v: 'string' }, index: [{ attribute: 'p', type: 'hash' }, { attribute: 'i', type: 'range', order: 'asc' }] };
await storage.createTable(domain, 'bench_q', schema);
const pool = mysql.createPool({ uri: url, connectionLimit: 10 });
await pool.query('DROP TABLE IF EXISTS bench_direct_q');
await pool.query('CREATE TABLE bench_direct_q (p VARCHAR(767) COLLATE utf8mb4_nopad_bin, i INT, v LONGTEXT, PRIMARY KEY (p, i)) DEFAULT CHARSET=utf8mb4');
const text = 'x'.repeat(1024);
for (let p = 0; p < 10; p++) for (let i = 0; i < 20; i++) { await storage.put(domain, { table: 'bench_q', attributes: { p: `p${p}`, i, v: text } }); await pool.execute('INSERT IGNORE INTO bench_direct_q VALUES (?, ?, ?)', [`p${p}`, i, text]); }
async function run(label, f, ms = 3000) {
  let n = 0; const end = Date.now() + ms;
  await Promise.all(Array.from({ length: 8 }, async () => { while (Date.now() < end) { await f(n++); } }));
  console.log(label, Math.round(n / (ms / 1000)), '/s');
}
for (let r = 0; r < 5; r++) {
  await run('storage', (n) => storage.get(domain, { table: 'bench_q', attributes: { p: `p${n % 10}` }, limit: 20 }));
  await run('driver ', (n) => pool.execute('SELECT i, v FROM bench_direct_q WHERE p = ? ORDER BY i LIMIT 20', [`p${n % 10}`]));
}
await storage.close(); await pool.end();
