import mysql from 'mysql2/promise';
const pool = mysql.createPool({ uri: 'mysql://wikistore_test:wikistore_test@127.0.0.1:3306/wikistore_qbench', connectionLimit: 10 });
let n = 0; const end = Date.now() + 5000;
await Promise.all(Array.from({ length: 8 }, async () => { while (Date.now() < end) { await pool.execute('SELECT i, v FROM bench_direct_q WHERE p = ? ORDER BY i LIMIT 20', [`p${n++ % 10}`]); } }));
console.log(n / 5);
await pool.end();
