import { openStorage } from '/work/main/dist/src/storage/index.js';
const url = 'mysql://wikistore_test:wikistore_test@127.0.0.1:3306/wikistore_qbench';
const storage = await openStorage({ backend: 'mariadb', url, pool_size: 10 });
const domain = 'q.example';
let n = 0; const end = Date.now() + 5000;
await Promise.all(Array.from({ length: 8 }, async () => { while (Date.now() < end) { await storage.get(domain, { table: 'bench_q', attributes: { p: `p${n++ % 10}` }, limit: 20 }); } }));
console.log(n / 5);
await storage.close();
