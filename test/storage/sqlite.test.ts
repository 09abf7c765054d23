import assert from 'node:assert/strict';
import path from 'node:path';
import { it } from 'node:test';
import Database from 'better-sqlite3';
import { openStorage } from '../../src/storage/index.js';
import { META_TABLE, physicalNames } from '../../src/storage/sql/names.js';
import { freshDomain, sqliteConfig, tempDir } from '../helpers.js';
import { storageConformance } from './conformance.js';

storageConformance('sqlite', sqliteConfig);

it("gives a table stored before the implicit '_tid' existed its column when its schema is PUT again at the same version", async () => {
  const file = path.join(tempDir(), 'legacy.sqlite3');
  const domain = freshDomain();
  const schema = { attributes: { k: 'string', v: 'string' }, index: [{ attribute: 'k', type: 'hash' }] };
  const first = await openStorage({ backend: 'sqlite', path: file });
  await first.createTable(domain, 'legacy', schema);
  await first.close();
  // The table as an earlier release left it: no column, and a stored schema without it.
  const db = new Database(file);
  db.prepare(`ALTER TABLE "${physicalNames(domain, 'legacy').main}" DROP COLUMN "_tid"`).run();
  const stored = JSON.parse((db.prepare(`SELECT schema FROM ${META_TABLE} WHERE domain = ? AND name = ?`).get(domain, 'legacy') as { schema: string }).schema);
  delete stored.attributes._tid;
  db.prepare(`UPDATE ${META_TABLE} SET schema = ? WHERE domain = ? AND name = ?`).run(JSON.stringify(stored), domain, 'legacy');
  db.close();

  const storage = await openStorage({ backend: 'sqlite', path: file });
  try {
    await storage.put(domain, { table: 'legacy', attributes: { k: 'old', v: 'kept' } });
    assert.deepEqual((await storage.get(domain, { table: 'legacy', attributes: { k: 'old' } })).items, [{ k: 'old', v: 'kept' }]);
    assert.equal(await storage.createTable(domain, 'legacy', schema), 'updated');
    assert.equal(await storage.createTable(domain, 'legacy', schema), 'unchanged');
    await storage.put(domain, { table: 'legacy', attributes: { k: 'new', v: 'x' } });
    const rows = (await storage.get(domain, { table: 'legacy' })).items;
    assert.deepEqual(rows.map((r) => [r.k, r.v, r._tid === null ? null : typeof r._tid]).sort(), [['new', 'x', 'string'], ['old', 'kept', null]]);
  } finally {
    await storage.close();
  }
});

it('makes a conditional update on the definition another process has just changed, at once (the update checks the schema epoch itself)', async () => {
  const file = path.join(tempDir(), 'cas.sqlite3');
  const domain = freshDomain();
  const schema = { attributes: { k: 'string', owner: 'string', n: 'int' }, index: [{ attribute: 'k', type: 'hash' }] };
  const here = await openStorage({ backend: 'sqlite', path: file });
  const other = await openStorage({ backend: 'sqlite', path: file });
  try {
    await here.createTable(domain, 'cas', schema);
    await here.put(domain, { table: 'cas', attributes: { k: 'a', owner: 'me', n: 1 } });
    // Planned and written here: the definition is kept.
    await here.put(domain, { table: 'cas', attributes: { k: 'a', n: 2 }, if: { owner: { eq: 'me' } } });
    // Elsewhere: `n` made text, the row written again.
    await other.dropTable(domain, 'cas');
    await other.createTable(domain, 'cas', { ...schema, attributes: { ...schema.attributes, n: 'string' } });
    await other.put(domain, { table: 'cas', attributes: { k: 'a', owner: 'me', n: 'two' } });
    // On the kept definition an int is a valid `n`; on the current one it is not: the update is refused, the row untouched.
    await assert.rejects(here.put(domain, { table: 'cas', attributes: { k: 'a', n: 3 }, if: { owner: { eq: 'me' } } }), /must be of type string/);
    assert.equal((await other.get(domain, { table: 'cas', attributes: { k: 'a' } })).items[0]!.n, 'two');
    await here.put(domain, { table: 'cas', attributes: { k: 'a', n: 'three' }, if: { owner: { eq: 'me' } } });
    assert.equal((await other.get(domain, { table: 'cas', attributes: { k: 'a' } })).items[0]!.n, 'three');
  } finally {
    await here.close();
    await other.close();
  }
});

it("reads a secondary index through that index, not along a partition's primary key in the order asked", async () => {
  const file = path.join(tempDir(), 'indexed.sqlite3');
  const domain = freshDomain();
  // A render store's shape: a page's renders by revision and tid, and found by tid alone.
  const schema = {
    attributes: { title: 'string', rev: 'int', tid: 'string', body: 'string' },
    index: [{ attribute: 'title', type: 'hash' }, { attribute: 'rev', type: 'range', order: 'desc' }, { attribute: 'tid', type: 'range', order: 'desc' }],
    secondaryIndexes: { by_tid: [{ attribute: 'tid', type: 'hash' }, { attribute: 'title', type: 'range' }, { attribute: 'rev', type: 'proj' }] },
  };
  const prepared: string[] = [];
  const prepare = Database.prototype.prepare;
  Database.prototype.prepare = function (this: Database.Database, sql: string) {
    prepared.push(sql);
    return prepare.call(this, sql);
  } as typeof prepare;
  const storage = await openStorage({ backend: 'sqlite', path: file });
  try {
    await storage.createTable(domain, 'renders', schema);
    for (let rev = 1; rev <= 300; rev++) await storage.put(domain, { table: 'renders', attributes: { title: 'Long', rev, tid: `t${rev}`, body: `b${rev}` } });
    const before = prepared.length;
    const { items } = await storage.get(domain, { table: 'renders', index: 'by_tid', attributes: { tid: 't1', title: 'Long' }, limit: 1 });
    assert.deepEqual(items.map((r) => [r.rev, r.body]), [[1, 'b1']]);
    const read = prepared.slice(before).find((sql) => sql.startsWith('SELECT') && sql.includes(physicalNames(domain, 'renders').main));
    assert.ok(read, 'the read was prepared');
    const db = new Database(file, { readonly: true });
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${read}`).all(...Array((read.match(/\?/g) ?? []).length).fill('x')) as { detail: string }[]).map((r) => r.detail);
    db.close();
    // The index made for by_tid (named after the table, `_i_` and a hash), seeking both its keys.
    const main = physicalNames(domain, 'renders').main;
    assert.ok(plan.some((d) => new RegExp(`USING INDEX ${main}_i_\\w+ \\(tid=\\? AND title=\\?\\)`).test(d)), plan.join(' | '));
  } finally {
    Database.prototype.prepare = prepare;
    await storage.close();
  }
});
