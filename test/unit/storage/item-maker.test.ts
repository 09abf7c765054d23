import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { itemMaker } from '../../../src/storage/item-maker.js';

const COLUMNS = ['title', 'rev', 'tid', 'page_id', 'timestamp', 'user_id', 'user_text', 'comment', 'minor', 'size', 'sha1', 'content_model', 'text_hidden',
  'user_hidden', 'comment_hidden', 'seen', 'parent_id', 'tags', 'latest_rev', 'latest_tid', 'deleted', 'checked', 'first_seen', 'moved_to', 'moved_page', 'noticed'];

it('makes an item of each column, in order, with the value given for it', () => {
  const row = Object.fromEntries(COLUMNS.map((c, i) => [c, i]));
  const item = itemMaker(COLUMNS)(row, (column, stored) => `${column}=${stored}`);
  assert.deepEqual(Object.keys(item), COLUMNS);
  assert.equal(item.latest_tid, 'latest_tid=19');
  assert.equal(Object.getPrototypeOf(item), Object.prototype);
  const named = itemMaker(['a-b', 'c"d', '_domain'])({ 'a-b': 1, 'c"d': 2, _domain: 'w' }, (_, v) => v);
  assert.deepEqual(named, { 'a-b': 1, 'c"d': 2, _domain: 'w' }, 'names are quoted as they are');
  assert.equal(itemMaker([...COLUMNS]), itemMaker(COLUMNS), 'one maker per set of columns');
});

it('makes an item of 26 columns with fast properties, where assigning them one by one made a dictionary', () => {
  // V8 tells only with its natives syntax, so a child process asks it.
  const maker = fileURLToPath(new URL('../../../src/storage/item-maker.js', import.meta.url));
  const script = `
    const { itemMaker } = await import(${JSON.stringify(maker)});
    const columns = ${JSON.stringify(COLUMNS)};
    const oneByOne = {};
    columns.forEach((c, i) => { oneByOne[c] = i; });
    console.log(JSON.stringify([%HasFastProperties(itemMaker(columns)(oneByOne, (_, v) => v)), %HasFastProperties(oneByOne)]));`;
  const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.deepEqual(JSON.parse(out), [true, false]);
});

it('makes items one by one where the process may not make code from strings', () => {
  const maker = fileURLToPath(new URL('../../../src/storage/item-maker.js', import.meta.url));
  const script = `
    const { itemMaker } = await import(${JSON.stringify(maker)});
    console.log(JSON.stringify(itemMaker(['a', 'b'])({ a: 1, b: 2 }, (c, v) => c + v)));`;
  const out = execFileSync(process.execPath, ['--disallow-code-generation-from-strings', '--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.deepEqual(JSON.parse(out), { a: 'a1', b: 'b2' });
});
