import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

// Import directions (no cycles, layers, modules apart) are dependency-cruiser's job in the test
// command (.dependency-cruiser.cjs). This checks what it cannot: that the SQL engines read alike.
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const STORAGE = path.join(ROOT, 'src/storage');
const SQL_ENGINES = ['sqlite', 'postgres', 'mariadb'];

describe('storage layout (docs/architecture.md, "Storage")', () => {
  it('gives every SQL engine the same two files, a dialect and a driver, and nothing else of its own', () => {
    for (const engine of SQL_ENGINES) {
      const files = fs.readdirSync(path.join(STORAGE, engine)).filter((f) => f.endsWith('.ts')).sort();
      assert.deepEqual(files, [`${engine}-dialect.ts`, `${engine}-driver.ts`], engine);
    }
  });

  it('names every engine folder among the SQL engines or Cassandra', () => {
    const folders = fs.readdirSync(STORAGE, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();
    assert.deepEqual(folders, [...SQL_ENGINES, 'cassandra', 'sql'].sort());
  });
});

describe('docs/architecture.md', () => {
  it('names only files that exist, so its walks through the code cannot point at what moved', () => {
    const text = fs.readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
    const named = [...new Set([...text.matchAll(/[\w./-]+\.ts\b/g)].map((m) => m[0]))];
    assert.ok(named.length > 20, `files named: ${named.length}`);
    const everyFile = ['src', 'test', 'bench', 'scripts'].flatMap((dir) => fs.readdirSync(path.join(ROOT, dir), { recursive: true }).map((f) => `${dir}/${String(f)}`));
    const missing = named.filter((name) => !everyFile.some((file) => file === name || file.endsWith(`/${name}`)));
    assert.deepEqual(missing, []);
  });
});
