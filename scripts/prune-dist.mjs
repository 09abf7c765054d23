// Removes compiled files whose TypeScript source is gone, so the incremental build can be kept
// between runs without a deleted or renamed test still running from dist/.
// usage: node scripts/prune-dist.mjs
import fs from 'node:fs';
import path from 'node:path';

const DIST = 'dist';
if (fs.existsSync(DIST)) {
  for (const entry of fs.readdirSync(DIST, { recursive: true })) {
    const file = String(entry);
    const m = /^(.*)\.(js|js\.map|d\.ts)$/.exec(file);
    if (!m) continue;
    if (!fs.existsSync(`${m[1]}.ts`)) fs.rmSync(path.join(DIST, file));
  }
}
