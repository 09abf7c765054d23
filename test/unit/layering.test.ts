import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

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

describe('the import rules (.dependency-cruiser.cjs)', () => {
  const rules = (createRequire(import.meta.url)(path.join(ROOT, '.dependency-cruiser.cjs')) as { forbidden: { name: string; from: { path?: string } }[] }).forbidden;
  const folders = (fs.readdirSync(path.join(ROOT, 'src'), { recursive: true }) as string[])
    // Folders holding code of their own (src/modules/ holds only folders).
    .filter((f) => fs.statSync(path.join(ROOT, 'src', f)).isDirectory() && fs.readdirSync(path.join(ROOT, 'src', f)).some((e) => e.endsWith('.ts')))
    .map((f) => `src/${f.split(path.sep).join('/')}/`);

  it('name every folder of src/ in a rule of its own (a folder added without one fails here)', () => {
    assert.ok(folders.length > 30, `folders: ${folders.length}`);
    // A rule about all of src/ (no cycles, nobody imports surfaces) names no folder in particular.
    const particular = rules.filter((rule) => rule.from.path !== undefined && rule.from.path !== '^src/');
    const unruled = folders.filter((folder) => !particular.some((rule) => new RegExp(rule.from.path!).test(`${folder}any-file.ts`)));
    assert.deepEqual(unruled, []);
  });

  it("place each folder of the page module in its layers by a rule of its own", () => {
    const layers = new Set(rules.map((rule) => /^\^src\/modules\/page\/([\w-]+)\/$/.exec(rule.from.path ?? '')?.[1]).filter((name) => name !== undefined));
    const pageFolders = folders.map((f) => /^src\/modules\/page\/([\w-]+)\/$/.exec(f)?.[1]).filter((name): name is string => name !== undefined);
    assert.deepEqual(pageFolders.filter((name) => !layers.has(name)), []);
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
