import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer } from './dist/test/helpers.js';
import { SnapshotWriter } from './dist/src/modules/page/snapshot/snapshot-writer.js';
import { Backfill } from './dist/src/modules/page/follow/page-backfill.js';
const W = 'http://127.0.0.1:8089';
const s = await startServer({ wikis: { 'wiki.test': { action_api: `${W}/api.php`, rest_api: `${W}/rest.php` } }, latest_check_interval: 3600 });
const ctx = s.app.router.context({ requestId: 'b', admin: true, log: s.app.log });
for (const round of [1, 2, 3]) {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'snapbench-'));
  const t0 = performance.now();
  let pages = 0;
  const report = await new SnapshotWriter(s.app.page.service, s.app.page.html2, 'wiki.test').run(ctx, { at: Date.now(), namespaces: [0], prefix: 'B', out, pagesPerChunk: 1000, concurrency: 4, progress: () => pages++ });
  const ms = performance.now() - t0;
  const bytes = report.manifest.files.reduce((n, f) => n + f.bytes, 0);
  const raw = fs.readdirSync(path.join(out, '.work')).filter((f) => f.endsWith('.ndjson')).reduce((n, f) => n + fs.statSync(path.join(out, '.work', f)).size, 0);
  console.log(`round ${round}: ${pages} titles (${report.manifest.counts.written} written) in ${ms.toFixed(0)} ms: ${(pages / ms * 1000).toFixed(0)} pages/s, ${(raw / 1048576 / (ms / 1000)).toFixed(1)} MB/s of NDJSON (${(raw/1048576).toFixed(1)} MB, ${(bytes/1048576).toFixed(1)} MB gzipped); RSS ${(process.memoryUsage().rss/1048576).toFixed(0)} MB`);
}
await s.close();
