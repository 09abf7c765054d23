import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../src');

/** Every relative import of every file under `dir`, as paths relative to src/. */
function imports(dir: string): { file: string; target: string }[] {
  const out: { file: string; target: string }[] = [];
  for (const entry of fs.readdirSync(path.join(SRC, dir), { recursive: true })) {
    const file = path.join(dir, String(entry));
    if (!file.endsWith('.ts')) continue;
    const text = fs.readFileSync(path.join(SRC, file), 'utf8');
    for (const m of text.matchAll(/from '(\.{1,2}\/[^']+)'/g)) {
      out.push({ file, target: path.normalize(path.join(path.dirname(file), m[1]!)) });
    }
  }
  return out;
}

describe('layering (docs/architecture.md §1: dependencies point downward)', () => {
  it('keeps storage free of HTTP, routing and modules', () => {
    const upward = imports('storage').filter(({ target }) => /^(http|router|modules|upstream|internal)\//.test(target) || target === 'errors.js');
    assert.deepEqual(upward, []);
  });

  it('lets no module import another module', () => {
    const across = imports('modules').filter(({ file, target }) => target.startsWith('modules/') && target.split('/')[1] !== file.split('/')[1]);
    assert.deepEqual(across, []);
  });

  it('keeps tid.ts out of storage', () => {
    assert.deepEqual(imports('.').filter(({ file, target }) => file === 'tid.ts' && target.startsWith('storage/')), []);
  });
});
