import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { v1 as uuidv1 } from 'uuid';
import type { StorageConfig } from '../../src/config.js';
import { StorageError } from '../../src/storage/errors.js';
import { STATUS_OF } from '../../src/modules/table/index.js';
import { openStorage, type TableStorage } from '../../src/storage/index.js';
import { SCHEMA_RECHECK_MS } from '../../src/storage/schema-cache.js';
import { GroupedStorage } from '../../src/storage/storage-groups.js';
import { freshDomain, sleep } from '../helpers.js';
import { timeuuidMillis } from '../../src/util/timeuuid.js';

/** Asserts that a promise rejects with the storage error that means the given HTTP status. */
export async function rejectsWith(promise: Promise<unknown>, status: number, match?: RegExp): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof StorageError, `expected StorageError, got ${String(err)}`);
    assert.equal(STATUS_OF[err.kind], status, err.detail);
    if (match) assert.match(err.detail, match);
    return true;
  });
}

const tid = (ms: number) => uuidv1({ msecs: ms, nsecs: 0 });
const TIMEUUID = /^[0-9a-f]{8}-[0-9a-f]{4}-1[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Rows of a table keyed by no timeuuid, with the implicit `_tid` each carries checked and taken off. */
function withoutTid(rows: Record<string, unknown>[]): Record<string, unknown>[] {
  return rows.map(({ _tid, ...rest }) => {
    assert.match(String(_tid), TIMEUUID, 'every row written carries its time-uuid');
    return rest;
  });
}

const revisions = {
  table: 'revisions',
  version: 1,
  attributes: { key: 'string', tid: 'timeuuid', value: 'blob', note: 'string', latest: 'timeuuid', hits: 'int' },
  index: [
    { attribute: 'key', type: 'hash' },
    { attribute: 'latest', type: 'static' },
    { attribute: 'tid', type: 'range', order: 'desc' },
  ],
};

const everyType = {
  table: 'types',
  attributes: {
    id: 'string', b: 'blob', s: 'string', i: 'int', v: 'varint', d: 'decimal', f: 'float', db: 'double', bo: 'boolean',
    tu: 'timeuuid', u: 'uuid', ts: 'timestamp', j: 'json', ss: 'set<string>', si: 'set<int>',
  },
  index: [{ attribute: 'id', type: 'hash' }],
};

const grid = {
  table: 'grid',
  attributes: { p: 'string', x: 'int', y: 'int', label: 'string' },
  index: [
    { attribute: 'p', type: 'hash' },
    { attribute: 'x', type: 'range', order: 'asc' },
    { attribute: 'y', type: 'range', order: 'desc' },
  ],
};

const pages = {
  table: 'pages',
  attributes: { title: 'string', rev: 'int', tid: 'timeuuid', comment: 'string' },
  index: [
    { attribute: 'title', type: 'hash' },
    { attribute: 'rev', type: 'range', order: 'desc' },
    { attribute: 'tid', type: 'range', order: 'desc' },
  ],
  secondaryIndexes: {
    by_rev: [
      { attribute: 'rev', type: 'hash' },
      { attribute: 'tid', type: 'range', order: 'desc' },
      { attribute: 'title', type: 'proj' },
    ],
  },
};

/** The suite's groups of cases, by name (a cluster runs those that depend on several replicas). */
export type ConformanceGroup =
  | 'health' | 'schemas' | "the implicit '_tid'" | 'writes' | 'queries' | 'secondary indexes' | 'expiry and retention'
  | 'reads after writes elsewhere' | 'isolation and concurrency' | 'hostile schemas and values (the same 400 on every backend)' | "RESTBase's model, in full"
  | 'storage groups';

/**
 * One suite, every backend: the semantics the table storage API promises. `only`: the groups to
 * run (the others are skipped, saying why).
 */
export function storageConformance(backend: string, config: () => StorageConfig, { only }: { only?: ConformanceGroup[] } = {}): void {
  const group = (name: ConformanceGroup, fn: () => void) => describe(name, { skip: only && !only.includes(name) ? 'one node proves it (test/storage/)' : false }, fn);
  describe(`table storage conformance: ${backend}`, () => {
    let storage: TableStorage;
    let shared: StorageConfig;
    before(async () => {
      shared = config();
      storage = await openStorage(shared);
    });
    after(async () => {
      await storage.close();
    });

    async function table(schema: Record<string, unknown>): Promise<string> {
      const domain = freshDomain();
      assert.equal(await storage.createTable(domain, schema.table as string, schema), 'created');
      return domain;
    }

    group('health', () => {
      it('answers ok while the engine answers, and down once it cannot (closed)', async () => {
        const health = await storage.health(2000);
        assert.equal(health.status, 'ok', JSON.stringify(health));
        const other = await openStorage(shared);
        await other.close();
        const closed = await other.health(2000);
        assert.equal(closed.status, 'down');
        assert.ok(typeof closed.detail?.reason === 'string' && closed.detail.reason.length > 0, 'with the reason');
      });
    });

    group('schemas', () => {
      it('creates a table once and answers the same schema idempotently', async () => {
        const domain = await table(revisions);
        assert.equal(await storage.createTable(domain, 'revisions', revisions), 'unchanged');
        const schema = await storage.getSchema(domain, 'revisions');
        assert.equal(schema.version, 1);
        assert.deepEqual(schema.revisionRetentionPolicy, { type: 'all' });
        assert.equal(schema.index.find((e) => e.attribute === 'tid')?.order, 'desc');
      });

      it('rejects invalid schemas with 400', async () => {
        const domain = freshDomain();
        const bad: [string, unknown][] = [
          ['injected attribute name', { attributes: { 'a"; DROP TABLE x; --': 'string' }, index: [{ attribute: 'a"; DROP TABLE x; --', type: 'hash' }] }],
          ['unknown type', { attributes: { a: 'text' }, index: [{ attribute: 'a', type: 'hash' }] }],
          ['unknown index attribute', { attributes: { a: 'string' }, index: [{ attribute: 'b', type: 'hash' }] }],
          ['no hash key', { attributes: { a: 'string' }, index: [{ attribute: 'a', type: 'range' }] }],
          ['static without range key', { attributes: { a: 'string', s: 'int' }, index: [{ attribute: 'a', type: 'hash' }, { attribute: 's', type: 'static' }] }],
          ['json key', { attributes: { a: 'json' }, index: [{ attribute: 'a', type: 'hash' }] }],
          ['bad retention', { ...grid, table: undefined, revisionRetentionPolicy: { type: 'forever' } }],
          ['not an object', 'schema'],
        ];
        for (const [why, schema] of bad) await rejectsWith(storage.createTable(domain, 'bad', schema), 400, undefined).catch((e) => assert.fail(`${why}: ${e}`));
        await rejectsWith(storage.createTable(domain, 'x"; DROP TABLE wikistore_tables; --', grid), 400);
        await rejectsWith(storage.getSchema(domain, 'bad'), 404);
      });

      it('migrates to a higher version by adding columns, static columns and indexes', async () => {
        const domain = await table(grid);
        await storage.put(domain, { table: 'grid', attributes: { p: 'a', x: 1, y: 1, label: 'old' } });
        const v2 = {
          ...grid,
          version: 2,
          attributes: { ...grid.attributes, color: 'string', owner: 'string' },
          index: [...grid.index, { attribute: 'owner', type: 'static' }],
          secondaryIndexes: { by_color: [{ attribute: 'color', type: 'hash' }, { attribute: 'p', type: 'proj' }] },
        };
        assert.equal(await storage.createTable(domain, 'grid', v2), 'updated');
        assert.equal(await storage.createTable(domain, 'grid', v2), 'unchanged');
        await storage.put(domain, { table: 'grid', attributes: { p: 'a', x: 2, y: 1, color: 'red', owner: 'me' } });
        const { items } = await storage.get(domain, { table: 'grid', attributes: { p: 'a' } });
        assert.deepEqual(items.map((r) => [r.x, r.label, r.color, r.owner]), [[1, 'old', null, 'me'], [2, null, 'red', 'me']]);
        const byColor = await storage.get(domain, { table: 'grid', index: 'by_color', attributes: { color: 'red' } });
        assert.deepEqual(byColor.items.map((r) => r.x), [2]);
      });

      it('migrates by adding an index over columns its rows already hold: each row found by it at once, an expired one not', async () => {
        const domain = await table(grid);
        for (let x = 0; x < 30; x++) await storage.put(domain, { table: 'grid', attributes: { p: `p${x % 3}`, x, y: 1, label: `l${x % 5}` } });
        await storage.put(domain, { table: 'grid', attributes: { p: 'gone', x: 1, y: 1, label: 'l0' } });
        await storage.put(domain, { table: 'grid', attributes: { p: 'expiring', x: 1, y: 1, label: 'l0', _ttl: 1 } });
        await sleep(1100);
        const v2 = { ...grid, version: 2, secondaryIndexes: { by_label: [{ attribute: 'label', type: 'hash' }, { attribute: 'p', type: 'range' }, { attribute: 'x', type: 'range' }] } };
        await storage.delete(domain, { table: 'grid', attributes: { p: 'gone' } });
        assert.equal(await storage.createTable(domain, 'grid', v2), 'updated');
        const byLabel = await storage.get(domain, { table: 'grid', index: 'by_label', attributes: { label: 'l0' }, limit: 100 });
        assert.deepEqual(byLabel.items.map((r) => `${r.p}/${r.x}`).sort(), ['p0/0', 'p0/15', 'p1/10', 'p1/25', 'p2/20', 'p2/5']);
      });

      it('rejects incompatible changes and changes without a higher version', async () => {
        const domain = await table(grid);
        await rejectsWith(storage.createTable(domain, 'grid', { ...grid, attributes: { ...grid.attributes, extra: 'int' } }), 400, /version/);
        await rejectsWith(storage.createTable(domain, 'grid', { ...grid, version: 2, attributes: { ...grid.attributes, label: 'int' } }), 400, /type/);
        await rejectsWith(storage.createTable(domain, 'grid', { ...grid, version: 2, index: grid.index.slice(0, 2) }), 400, /keys/);
        assert.deepEqual((await storage.getSchema(domain, 'grid')).attributes, { ...grid.attributes, _tid: 'timeuuid' });
      });

      it('drops a table', async () => {
        const domain = await table(grid);
        await storage.dropTable(domain, 'grid');
        await rejectsWith(storage.get(domain, { table: 'grid' }), 404);
        assert.equal(await storage.createTable(domain, 'grid', grid), 'created');
        assert.deepEqual((await storage.get(domain, { table: 'grid' })).items, []);
      });
    });

    group("the implicit '_tid'", () => {
      it('is added to a table keyed by no timeuuid and filled on every row write, or kept as the writer gives it', async () => {
        const domain = await table(grid);
        assert.equal((await storage.getSchema(domain, 'grid')).attributes._tid, 'timeuuid');
        assert.equal((await storage.getSchema(await table(revisions), 'revisions')).attributes._tid, undefined, 'a timeuuid range key is the version already');
        const key = { p: 'a', x: 1, y: 1 };
        const read = async () => (await storage.get(domain, { table: 'grid', attributes: key })).items[0]!;
        const before = Date.now();
        await storage.put(domain, { table: 'grid', attributes: { ...key, label: 'one' } });
        const first = String((await read())._tid);
        assert.match(first, TIMEUUID);
        const at = Number((BigInt(`0x${first.slice(15, 18)}${first.slice(9, 13)}${first.slice(0, 8)}`) - 0x01b21dd213814000n) / 10000n);
        assert.ok(at >= before - 1000 && at <= Date.now() + 1000, 'the time-uuid says when the row was written');
        await storage.put(domain, { table: 'grid', attributes: { ...key, label: 'two' } });
        assert.notEqual((await read())._tid, first, 'a new write, a new time-uuid');
        const given = tid(1_600_000_000_000);
        await storage.put(domain, { table: 'grid', attributes: { ...key, label: 'three', _tid: given } });
        assert.equal((await read())._tid, given);
        await rejectsWith(storage.put(domain, { table: 'grid', attributes: { ...key, _tid: 'yesterday' } }), 400, /_tid/);
        // A schema read back names it, and PUT again changes nothing.
        assert.equal(await storage.createTable(domain, 'grid', await storage.getSchema(domain, 'grid')), 'unchanged');
      });

      it('makes a row version a condition: of 20 writers editing one version, one wins', async () => {
        const domain = await table(grid);
        const key = { p: 'a', x: 1, y: 1 };
        await storage.put(domain, { table: 'grid', attributes: { ...key, label: 'base' } });
        const base = (await storage.get(domain, { table: 'grid', attributes: key })).items[0]!._tid;
        const outcomes = await Promise.allSettled(
          Array.from({ length: 20 }, (_, i) => storage.put(domain, { table: 'grid', attributes: { ...key, label: `edit ${i}` }, if: { _tid: { eq: base } } })),
        );
        const won = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [i] : []));
        assert.equal(won.length, 1, `${won.length} writers won`);
        for (const o of outcomes) if (o.status === 'rejected') assert.equal((o.reason as StorageError).kind, 'condition-failed');
        const [row] = (await storage.get(domain, { table: 'grid', attributes: key })).items;
        assert.equal(row!.label, `edit ${won[0]}`);
        assert.notEqual(row!._tid, base);
      });

      it('holds a compare-and-set to the row as it is: the same values written again, a row absent or expired, a condition of each type', async () => {
        const domain = await table(everyType);
        const row = { id: 'cas', s: 'Ab', i: 7, v: 12345678901, tu: tid(Date.now()), u: '0e1b4ee8-3f2b-4f4b-9a51-2d3ad4d27b6a', ts: '2026-01-02T03:04:05.000Z', b: Buffer.from('x') };
        await storage.put(domain, { table: 'types', attributes: row });
        // Written again exactly as it is: the condition holds, so it is no 412 (an engine that counts rows changed sees none).
        await storage.put(domain, { table: 'types', attributes: row, if: { s: { eq: 'Ab' } } });
        for (const [column, wrong] of [['s', 'ab'], ['s', 'Ab '], ['i', 8], ['v', 12345678902], ['tu', tid(Date.now() + 1)], ['u', '0e1b4ee8-3f2b-4f4b-9a51-2d3ad4d27b6b'], ['ts', '2026-01-02T03:04:06.000Z']] as const) {
          await rejectsWith(storage.put(domain, { table: 'types', attributes: { id: 'cas', b: Buffer.from('no') }, if: { [column]: { eq: wrong } } }), 412);
        }
        await storage.put(domain, { table: 'types', attributes: { id: 'cas', b: Buffer.from('yes') }, if: { s: { eq: 'Ab' }, i: { eq: 7 }, v: { eq: 12345678901 }, tu: { eq: row.tu }, u: { eq: row.u }, ts: { eq: row.ts } } });
        const [after] = (await storage.get(domain, { table: 'types', attributes: { id: 'cas' } })).items;
        assert.equal(Buffer.from(after!.b as Buffer).toString(), 'yes');
        assert.equal(after!.s, 'Ab', 'columns not written keep their values');
        // Every column but the key made null by a compare-and-set: the row is still there.
        await storage.put(domain, { table: 'types', attributes: { id: 'bare', s: 'x' } });
        await storage.put(domain, { table: 'types', attributes: { id: 'bare', s: null }, if: { s: { eq: 'x' } } });
        assert.deepEqual((await storage.get(domain, { table: 'types', attributes: { id: 'bare' }, proj: ['id', 's'] })).items, [{ id: 'bare', s: null }]);
        await rejectsWith(storage.put(domain, { table: 'types', attributes: { id: 'absent', s: 'x' }, if: { s: { eq: 'x' } } }), 412);
        assert.equal((await storage.get(domain, { table: 'types', attributes: { id: 'absent' } })).items.length, 0);
        await storage.put(domain, { table: 'types', attributes: { id: 'brief', s: 'x', _ttl: 1 } });
        await sleep(2100);
        await rejectsWith(storage.put(domain, { table: 'types', attributes: { id: 'brief', s: 'y' }, if: { s: { eq: 'x' } } }), 412);
        assert.equal((await storage.get(domain, { table: 'types', attributes: { id: 'brief' } })).items.length, 0, 'an expired row is not brought back');
      });

      it('is refused as a key, a static column or of another type', async () => {
        const bad: [string, unknown][] = [
          ['string', { ...grid, attributes: { ...grid.attributes, _tid: 'string' } }],
          ['a range key', { ...grid, attributes: { ...grid.attributes, _tid: 'timeuuid' }, index: [...grid.index, { attribute: '_tid', type: 'range', order: 'desc' }] }],
          ['beside a timeuuid key', { ...revisions, table: 'grid', attributes: { ...revisions.attributes, _tid: 'timeuuid' } }],
          ['static', { ...grid, attributes: { ...grid.attributes, _tid: 'timeuuid' }, index: [...grid.index, { attribute: '_tid', type: 'static' }] }],
        ];
        for (const [why, schema] of bad) await rejectsWith(storage.createTable(freshDomain(), 'grid', schema), 400, /_tid/).catch((e) => assert.fail(`${why}: ${e}`));
      });
    });

    group('writes', () => {
      it('round-trips every attribute type', async () => {
        const domain = await table(everyType);
        const row = {
          id: 'r1', b: Buffer.from([0, 1, 2, 255]), s: 'ünïcödé ✓', i: -2147483648, v: 9007199254740991, d: '12345.6789',
          f: 1.5, db: -0.1, bo: true, tu: tid(1_700_000_000_000), u: '6ba7b810-9dad-11d1-80b4-00c04fd430c8',
          ts: '2014-01-01T20:23:22.100Z', j: { nested: [1, 'two', null] }, ss: ['b', 'a', 'b'], si: [3, 1, 2],
        };
        await storage.put(domain, { table: 'types', attributes: row });
        const [item] = withoutTid((await storage.get(domain, { table: 'types', attributes: { id: 'r1' } })).items);
        assert.deepEqual(item, { ...row, ss: ['a', 'b'], si: [1, 2, 3] });
        await storage.put(domain, { table: 'types', attributes: { id: 'r2', b: Buffer.from('hi').toString('base64'), bo: false } });
        const [second] = (await storage.get(domain, { table: 'types', attributes: { id: 'r2' } })).items;
        assert.deepEqual([second!.b, second!.bo, second!.s], [Buffer.from('hi'), false, null]);
      });

      it('validates every write and writes nothing when it is invalid', async () => {
        const domain = await table(revisions);
        const t = tid(Date.now());
        const invalid = [
          { key: 'k', tid: t, hits: '12x' },
          { tid: t, value: Buffer.from('x') },
          { key: 'k', tid: t, unknown: 1 },
          { key: 'k', tid: t, hits: 'many' },
          { key: 'k', tid: t, hits: 2 ** 40 },
          { key: 'k', tid: 'not-a-uuid' },
          { key: 'k', tid: '6ba7b810-9dad-41d1-80b4-00c04fd430c8' },
          { key: 'k', tid: t, value: 'not base64!' },
          { key: 'k', tid: t, _ttl: -5 },
        ];
        for (const attributes of invalid) await rejectsWith(storage.put(domain, { table: 'revisions', attributes }), 400);
        await rejectsWith(storage.put(domain, { table: 'revisions', attributes: { key: 'k', tid: t }, if: { nope: { eq: 1 } } }), 400);
        assert.deepEqual((await storage.get(domain, { table: 'revisions' })).items, []);
      });

      it('updates only the columns a write names', async () => {
        const domain = await table(revisions);
        const t = tid(Date.now());
        await storage.put(domain, { table: 'revisions', attributes: { key: 'k', tid: t, note: 'first', hits: 1 } });
        await storage.put(domain, { table: 'revisions', attributes: { key: 'k', tid: t, hits: 2 } });
        const [row] = (await storage.get(domain, { table: 'revisions', attributes: { key: 'k' } })).items;
        assert.deepEqual([row!.note, row!.hits], ['first', 2]);
      });

      it("'not exists' writes once and answers 412 after, changing nothing", async () => {
        const domain = await table(revisions);
        const t = tid(Date.now());
        await storage.put(domain, { table: 'revisions', attributes: { key: 'k', tid: t, note: 'one' }, if: 'not exists' });
        await rejectsWith(storage.put(domain, { table: 'revisions', attributes: { key: 'k', tid: t, note: 'two' }, if: 'not exists' }), 412);
        const { items } = await storage.get(domain, { table: 'revisions', attributes: { key: 'k' } });
        assert.deepEqual(items.map((r) => r.note), ['one']);
      });

      it("takes a row whose TTL has passed as absent to 'not exists', keeping none of its columns", async () => {
        const domain = await table(revisions);
        const t = tid(Date.now());
        await storage.put(domain, { table: 'revisions', attributes: { key: 'k', tid: t, note: 'gone', hits: 7, _ttl: 1 } });
        await sleep(1100);
        await storage.put(domain, { table: 'revisions', attributes: { key: 'k', tid: t, note: 'new' }, if: 'not exists' });
        const { items } = await storage.get(domain, { table: 'revisions', attributes: { key: 'k' } });
        assert.deepEqual(items.map((r) => [r.note, r.hits]), [['new', null]]);
        await rejectsWith(storage.put(domain, { table: 'revisions', attributes: { key: 'k', tid: t, note: 'again' }, if: 'not exists' }), 412);
      });

      it("serialises 'not exists' with the partition's other conditional writes: each condition sees the last write", async () => {
        const domain = await table(revisions);
        const t = tid(Date.now());
        // Racing: inserts of the row, and updates conditional on the count they read.
        const writes = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => (i % 3 === 0
          ? storage.put(domain, { table: 'revisions', attributes: { key: 'k', tid: t, hits: 0 }, if: 'not exists' })
          : (async () => {
            const [row] = (await storage.get(domain, { table: 'revisions', attributes: { key: 'k', tid: t } })).items;
            if (!row) throw new Error('not there yet');
            await storage.put(domain, { table: 'revisions', attributes: { key: 'k', tid: t, hits: (row.hits as number) + 1 }, if: { hits: { eq: row.hits } } });
          })())));
        const won = writes.filter((w, i) => w.status === 'fulfilled' && i % 3 !== 0).length;
        assert.equal(writes.filter((w, i) => w.status === 'fulfilled' && i % 3 === 0).length, 1, 'one insert wins');
        const [row] = (await storage.get(domain, { table: 'revisions', attributes: { key: 'k', tid: t } })).items;
        assert.equal(row!.hits, won, 'every update that won counted once, none undone by an insert');
      });

      it('applies {attribute: {eq}} conditions to regular and static columns', async () => {
        const domain = await table(revisions);
        const [t1, t2] = [tid(Date.now() - 1000), tid(Date.now())];
        await storage.put(domain, { table: 'revisions', attributes: { key: 'k', tid: t1, note: 'a', latest: t1 } });
        await rejectsWith(storage.put(domain, { table: 'revisions', attributes: { key: 'k', tid: t1, note: 'b' }, if: { note: { eq: 'x' } } }), 412);
        await storage.put(domain, { table: 'revisions', attributes: { key: 'k', tid: t1, note: 'b' }, if: { note: { eq: 'a' } } });
        await rejectsWith(storage.put(domain, { table: 'revisions', attributes: { key: 'k', tid: t2, latest: t2 }, if: { latest: { eq: t2 } } }), 412);
        assert.equal((await storage.get(domain, { table: 'revisions', attributes: { key: 'k' } })).items.length, 1, 'a failed CAS must not add the row');
        await storage.put(domain, { table: 'revisions', attributes: { key: 'k', tid: t2, latest: t2 }, if: { latest: { eq: t1 } } });
        const { items } = await storage.get(domain, { table: 'revisions', attributes: { key: 'k' } });
        assert.deepEqual(items.map((r) => [r.tid, r.note, r.latest]), [[t2, null, t2], [t1, 'b', t2]]);
      });

      it('keeps one static value per partition, joined to every row, writable on its own', async () => {
        const domain = await table(revisions);
        const ts = [1, 2, 3].map((i) => tid(Date.now() - i * 1000));
        for (const t of ts) await storage.put(domain, { table: 'revisions', attributes: { key: 'a', tid: t, latest: t } });
        await storage.put(domain, { table: 'revisions', attributes: { key: 'b', tid: ts[0], latest: ts[0] } });
        const a = await storage.get(domain, { table: 'revisions', attributes: { key: 'a' } });
        assert.deepEqual(a.items.map((r) => r.latest), [ts[2], ts[2], ts[2]]);
        await storage.put(domain, { table: 'revisions', attributes: { key: 'a', latest: ts[0] } });
        const again = await storage.get(domain, { table: 'revisions', attributes: { key: 'a' }, proj: ['tid', 'latest'] });
        assert.deepEqual(again.items.map((r) => r.latest), [ts[0], ts[0], ts[0]]);
        assert.deepEqual(Object.keys(again.items[0]!).sort(), ['latest', 'tid']);
        const b = await storage.get(domain, { table: 'revisions', attributes: { key: 'b' } });
        assert.deepEqual(b.items.map((r) => r.latest), [ts[0]]);
      });

      it('deletes rows by key, and a whole partition with its static columns', async () => {
        const domain = await table(revisions);
        const [t1, t2] = [tid(Date.now() - 1000), tid(Date.now())];
        for (const t of [t1, t2]) await storage.put(domain, { table: 'revisions', attributes: { key: 'k', tid: t, latest: t2 } });
        await storage.delete(domain, { table: 'revisions', attributes: { key: 'k', tid: t1 } });
        assert.deepEqual((await storage.get(domain, { table: 'revisions', attributes: { key: 'k' } })).items.map((r) => r.tid), [t2]);
        await storage.delete(domain, { table: 'revisions', attributes: { key: 'k' } });
        await storage.put(domain, { table: 'revisions', attributes: { key: 'k', tid: t1 } });
        const [row] = (await storage.get(domain, { table: 'revisions', attributes: { key: 'k' } })).items;
        assert.equal(row!.latest, null, 'the static column went with the partition');
        await rejectsWith(storage.delete(domain, { table: 'revisions', attributes: { tid: t1 } }), 400);
        await rejectsWith(storage.delete(domain, { table: 'revisions', attributes: { key: 'k', note: 'x' } }), 400);
      });
    });

    group('queries', () => {
      let domain: string;
      before(async () => {
        domain = await table(grid);
        for (const p of ['p1', 'p2', 'p3']) {
          for (let x = 0; x < 5; x++) for (let y = 0; y < 4; y++) await storage.put(domain, { table: 'grid', attributes: { p, x, y, label: `${p}:${x}:${y}` } });
        }
      });

      it('orders by range keys as declared, and reversed on request', async () => {
        const { items } = await storage.get(domain, { table: 'grid', attributes: { p: 'p1', x: 1 } });
        assert.deepEqual(items.map((r) => r.y), [3, 2, 1, 0]);
        const all = await storage.get(domain, { table: 'grid', attributes: { p: 'p1' } });
        assert.deepEqual(all.items.slice(0, 5).map((r) => [r.x, r.y]), [[0, 3], [0, 2], [0, 1], [0, 0], [1, 3]]);
        const reversed = await storage.get(domain, { table: 'grid', attributes: { p: 'p1' }, order: { x: 'desc', y: 'asc' } });
        assert.deepEqual(reversed.items.slice(0, 2).map((r) => [r.x, r.y]), [[4, 0], [4, 1]]);
      });

      it('answers each point lookup with its own row, keys named in any order, and validates every one', async () => {
        const point = async (attributes: Record<string, unknown>) => withoutTid((await storage.get(domain, { table: 'grid', attributes })).items);
        // Repeated lookups of one shape (a kept statement on SQLite) with other values each time.
        for (const [p, x, y] of [['p1', 0, 0], ['p3', 4, 3], ['p2', 2, 1], ['p1', 0, 0]] as const) {
          assert.deepEqual(await point({ p, x, y }), [{ p, x, y, label: `${p}:${x}:${y}` }]);
          assert.deepEqual(await point({ y, p, x }), [{ p, x, y, label: `${p}:${x}:${y}` }]);
        }
        assert.deepEqual(await point({ p: 'p1', x: 9, y: 0 }), []);
        assert.deepEqual(await point({ p: 'none', x: 0, y: 0 }), []);
        // Values the planner refuses are refused as often as they come, whatever was looked up before.
        for (let i = 0; i < 2; i++) {
          await rejectsWith(point({ p: 'p1', x: 1.5, y: 0 }), 400);
          await rejectsWith(point({ p: 'p1', x: 'one', y: 0 }), 400);
          await rejectsWith(point({ p: 'p1', x: 1, y: 0, label: 'x' }), 400, /label/);
        }
        // A projection or a TTL changes the answer's shape: not the plain lookup's.
        assert.deepEqual((await storage.get(domain, { table: 'grid', attributes: { p: 'p1', x: 1, y: 2 }, proj: ['label'] })).items, [{ label: 'p1:1:2' }]);
        assert.deepEqual(withoutTid((await storage.get(domain, { table: 'grid', attributes: { p: 'p1', x: 1, y: 2 }, withTTL: true })).items), [{ p: 'p1', x: 1, y: 2, label: 'p1:1:2', _ttl: null }]);
      });

      it('answers eq, lt, gt, le, ge and between on range keys', async () => {
        const xs = async (cond: unknown) =>
          [...new Set((await storage.get(domain, { table: 'grid', attributes: { p: 'p2', x: cond } })).items.map((r) => r.x))];
        assert.deepEqual(await xs({ lt: 2 }), [0, 1]);
        assert.deepEqual(await xs({ le: 2 }), [0, 1, 2]);
        assert.deepEqual(await xs({ gt: 3 }), [4]);
        assert.deepEqual(await xs({ ge: 3 }), [3, 4]);
        assert.deepEqual(await xs({ between: [1, 3] }), [1, 2, 3]);
        assert.deepEqual(await xs({ eq: 2 }), [2]);
        assert.deepEqual(await xs({ gt: 0, lt: 2 }), [1]);
      });

      it('pages through a partition and through the whole table with opaque tokens', async () => {
        const seen: string[] = [];
        let next: string | undefined;
        do {
          const page = await storage.get(domain, { table: 'grid', attributes: { p: 'p3' }, limit: 3, next });
          assert.ok(page.items.length <= 3);
          seen.push(...page.items.map((r) => r.label as string));
          next = page.next;
        } while (next);
        const whole = await storage.get(domain, { table: 'grid', attributes: { p: 'p3' } });
        assert.deepEqual(seen, whole.items.map((r) => r.label));
        assert.equal(seen.length, 20);

        const table: string[] = [];
        next = undefined;
        do {
          const page = await storage.get(domain, { table: 'grid', limit: 7, next });
          table.push(...page.items.map((r) => r.label as string));
          next = page.next;
        } while (next);
        assert.equal(table.length, 60);
        assert.equal(new Set(table).size, 60);
        // Partitions come in the engine's order (by key in SQL, by token in Cassandra), each whole
        // and in its own order.
        const partitions = [...new Set(table.map((label) => label.split(':')[0]!))];
        assert.deepEqual([...partitions].sort(), ['p1', 'p2', 'p3']);
        for (const [i, p] of partitions.entries()) {
          const own = (await storage.get(domain, { table: 'grid', attributes: { p } })).items.map((r) => r.label);
          assert.deepEqual(table.slice(i * 20, i * 20 + 20), own);
        }
      });

      it('keeps a paging token valid while rows are written', async () => {
        const d = await table(grid);
        for (let x = 0; x < 10; x++) await storage.put(d, { table: 'grid', attributes: { p: 'p', x, y: 0 } });
        const first = await storage.get(d, { table: 'grid', attributes: { p: 'p' }, limit: 4 });
        assert.deepEqual(first.items.map((r) => r.x), [0, 1, 2, 3]);
        await storage.put(d, { table: 'grid', attributes: { p: 'p', x: -1, y: 0 } });
        await storage.put(d, { table: 'grid', attributes: { p: 'p', x: 5, y: 1 } });
        await storage.delete(d, { table: 'grid', attributes: { p: 'p', x: 4 } });
        const rest = await storage.get(d, { table: 'grid', attributes: { p: 'p' }, next: first.next });
        assert.deepEqual(rest.items.map((r) => [r.x, r.y]), [[5, 1], [5, 0], [6, 0], [7, 0], [8, 0], [9, 0]]);
        assert.equal(rest.next, undefined);
      });

      it('caps huge limits and rejects malformed or foreign tokens', async () => {
        const d = await table(grid);
        for (let x = 0; x < 1005; x++) await storage.put(d, { table: 'grid', attributes: { p: 'p', x, y: 0 } });
        const page = await storage.get(d, { table: 'grid', attributes: { p: 'p' }, limit: 1_000_000 });
        assert.equal(page.items.length, 1000);
        assert.ok(page.next);
        await rejectsWith(storage.get(d, { table: 'grid', attributes: { p: 'p' }, next: 'garbage!' }), 400);
        await rejectsWith(storage.get(d, { table: 'grid', attributes: { p: 'p' }, next: Buffer.from('{"f":1}').toString('base64url') }), 400);
        await rejectsWith(storage.get(d, { table: 'grid', attributes: { p: 'p' }, order: { x: 'desc' }, next: page.next }), 400);
        await rejectsWith(storage.get(d, { table: 'grid', attributes: { p: 'p' }, limit: 0 }), 400);
        const point = await storage.get(d, { table: 'grid', attributes: { p: 'p', x: 1, y: 0 }, limit: 1 });
        assert.deepEqual([point.items.length, point.next], [1, undefined], 'a point lookup has no next page');
      });

      it('lists each partition once with distinct, paged, with its static columns', async () => {
        const d = await table(revisions);
        const t = tid(Date.now());
        for (const key of ['b', 'a', 'c']) for (let i = 0; i < 3; i++) await storage.put(d, { table: 'revisions', attributes: { key, tid: tid(Date.now() + i), latest: t } });
        const first = await storage.get(d, { table: 'revisions', distinct: true, limit: 2 });
        assert.equal(first.items.length, 2);
        const rest = await storage.get(d, { table: 'revisions', distinct: true, limit: 2, next: first.next });
        assert.equal(rest.items.length, 1);
        assert.equal(rest.next, undefined);
        const listed = [...first.items, ...rest.items].sort((x, y) => String(x.key).localeCompare(String(y.key)));
        assert.deepEqual(listed, [{ key: 'a', latest: t }, { key: 'b', latest: t }, { key: 'c', latest: t }]);
        await rejectsWith(storage.get(d, { table: 'revisions', distinct: true, proj: ['tid'] }), 400);
        await rejectsWith(storage.get(d, { table: 'revisions', distinct: true, attributes: { key: 'a', tid: t } }), 400);
      });

      it('pages a partition listing of many partitions in key order, each once, with or without static values', async () => {
        const d = await table(revisions);
        const t = tid(Date.now());
        const keys = Array.from({ length: 25 }, (_, i) => `k${String(i).padStart(2, '0')}`);
        for (const [i, key] of [...keys].reverse().entries()) {
          for (let r = 0; r < 1 + (i % 3); r++) await storage.put(d, { table: 'revisions', attributes: { key, tid: tid(Date.now() + r), ...(i % 2 ? { latest: t } : {}) } });
        }
        const pages: Record<string, unknown>[][] = [];
        let next: string | undefined;
        do {
          const page = await storage.get(d, { table: 'revisions', distinct: true, limit: 10, next });
          pages.push(page.items);
          next = page.next;
        } while (next && pages.length < 10);
        assert.deepEqual(pages.map((p) => p.length).filter((n) => n > 0), [10, 10, 5]);
        const listed = pages.flat();
        const sorted = [...listed].sort((x, y) => (String(x.key) < String(y.key) ? -1 : 1));
        if (storage.backend !== 'cassandra') assert.deepEqual(listed.map((r) => r.key), keys, 'in key order');
        assert.deepEqual(sorted.map((r) => r.key), keys);
        for (const row of listed) {
          const i = [...keys].reverse().indexOf(String(row.key));
          assert.equal(row.latest ?? null, i % 2 ? t : null, `${row.key}'s static value`);
        }
      });

      it('rejects queries the model cannot answer', async () => {
        await rejectsWith(storage.get(domain, { table: 'grid', attributes: { label: 'x' } }), 400);
        await rejectsWith(storage.get(domain, { table: 'grid', attributes: { p: { gt: 'a' } } }), 400);
        await rejectsWith(storage.get(domain, { table: 'grid', attributes: { p: 'p1', x: { near: 1 } } }), 400);
        await rejectsWith(storage.get(domain, { table: 'grid', attributes: { p: 'p1', x: 'one' } }), 400);
        await rejectsWith(storage.get(domain, { table: 'grid', index: 'nope' }), 400);
        await rejectsWith(storage.get(domain, { table: 'grid', order: { label: 'asc' } }), 400);
        await rejectsWith(storage.get(domain, { table: 'grid', proj: ['nope'] }), 400);
        await rejectsWith(storage.get(domain, { table: 'missing' }), 404);
      });
    });

    group('secondary indexes', () => {
      it('finds primary rows by index and follows updates and deletes', async () => {
        const domain = await table(pages);
        const tids = [0, 1, 2, 3, 4].map((i) => tid(1_600_000_000_000 + i * 1000));
        const t = (i: number) => tids[i]!;
        await storage.put(domain, { table: 'pages', attributes: { title: 'A', rev: 1, tid: t(1), comment: 'a1' } });
        await storage.put(domain, { table: 'pages', attributes: { title: 'A', rev: 2, tid: t(2), comment: 'a2' } });
        await storage.put(domain, { table: 'pages', attributes: { title: 'B', rev: 3, tid: t(3), comment: 'b3' } });
        await storage.put(domain, { table: 'pages', attributes: { title: 'A', rev: 2, tid: t(4), comment: 'a2 re-render' } });
        const byRev = await storage.get(domain, { table: 'pages', index: 'by_rev', attributes: { rev: 2 } });
        assert.deepEqual(byRev.items.map((r) => [r.title, r.tid, r.comment]), [['A', t(4), 'a2 re-render'], ['A', t(2), 'a2']]);
        const one = await storage.get(domain, { table: 'pages', index: 'by_rev', attributes: { rev: 2 }, limit: 1 });
        const two = await storage.get(domain, { table: 'pages', index: 'by_rev', attributes: { rev: 2 }, limit: 1, next: one.next });
        assert.deepEqual([one.items[0]!.tid, two.items[0]!.tid], [t(4), t(2)]);
        await storage.delete(domain, { table: 'pages', attributes: { title: 'A', rev: 2, tid: t(4) } });
        assert.deepEqual((await storage.get(domain, { table: 'pages', index: 'by_rev', attributes: { rev: 2 } })).items.map((r) => r.tid), [t(2)]);
        await rejectsWith(storage.get(domain, { table: 'pages', index: 'by_rev', attributes: {} }), 400);
      });

      it('answers reads of one shape (a range on an index, a projection) by their own values, one after another', async () => {
        const domain = await table(pages);
        // Made once: two timeuuids of the same moment differ (and compare) by their clock sequence and node.
        const tids = [0, 1, 2, 3, 4, 5].map((i) => tid(1_600_000_000_000 + i * 1000));
        const t = (i: number) => tids[i]!;
        for (const [title, rev] of [['A', 1], ['A', 2], ['A', 5], ['B', 3], ['B', 4]] as const) {
          await storage.put(domain, { table: 'pages', attributes: { title, rev, tid: t(rev), comment: `${title}${rev}` } });
        }
        // The same shape again and again with other values: each answered by its own.
        const newestUpTo = async (title: string, rev: number) =>
          (await storage.get(domain, { table: 'pages', attributes: { title, rev: { le: rev } }, proj: ['rev', 'comment'], limit: 1 })).items.map((r) => r.comment);
        assert.deepEqual(await Promise.all([newestUpTo('A', 4), newestUpTo('A', 1), newestUpTo('B', 4), newestUpTo('B', 2), newestUpTo('A', 9)]), [['A2'], ['A1'], ['B4'], [], ['A5']]);
        const byRevAfter = async (rev: number, after: number) =>
          (await storage.get(domain, { table: 'pages', index: 'by_rev', attributes: { rev, tid: { gt: t(after) } }, limit: 5 })).items.map((r) => r.comment);
        assert.deepEqual([await byRevAfter(2, 1), await byRevAfter(2, 2), await byRevAfter(3, 0)], [['A2'], [], ['B3']]);
        // Another projection, another order of the conditions: their own answers.
        assert.deepEqual((await storage.get(domain, { table: 'pages', attributes: { title: 'A', rev: { le: 4 } }, proj: ['rev'], limit: 1 })).items, [{ rev: 2 }]);
        assert.deepEqual((await storage.get(domain, { table: 'pages', attributes: { rev: { lt: 5 }, title: 'A' }, limit: 1 })).items.map((r) => r.rev), [2]);
        // In reverse order: the same conditions, their own answers (the next revision after one).
        const nextAfter = async (title: string, rev: number) =>
          (await storage.get(domain, { table: 'pages', attributes: { title, rev: { gt: rev } }, order: { rev: 'asc' }, limit: 1 })).items.map((r) => r.comment);
        assert.deepEqual([await nextAfter('A', 1), await nextAfter('A', 2), await nextAfter('A', 5), await nextAfter('B', 0)], [['A2'], ['A5'], [], ['B3']]);
        assert.deepEqual((await storage.get(domain, { table: 'pages', attributes: { title: 'A', rev: { gt: 1 } }, order: { rev: 'desc' }, limit: 1 })).items.map((r) => r.comment), ['A5']);
        await rejectsWith(storage.get(domain, { table: 'pages', attributes: { title: 'A', rev: { gt: 1 } }, order: { rev: 'sideways' } as unknown as Record<string, 'asc'>, limit: 1 }), 400);
        // A value of the wrong type, or none, in a shape read before: refused as the first time.
        await rejectsWith(storage.get(domain, { table: 'pages', attributes: { title: 'A', rev: { le: 'two' } }, proj: ['rev', 'comment'], limit: 1 }), 400);
        await rejectsWith(storage.get(domain, { table: 'pages', attributes: { title: 'A', rev: { le: null } }, proj: ['rev', 'comment'], limit: 1 }), 400);
      });

      it('moves a row between index values, deletes rows that never had an entry, and refuses an index over a static column', async () => {
        const tagged = {
          table: 'tagged',
          attributes: { id: 'string', n: 'int', tag: 'string', owner: 'string' },
          index: [{ attribute: 'id', type: 'hash' }, { attribute: 'owner', type: 'static' }, { attribute: 'n', type: 'range' }],
          secondaryIndexes: { by_tag: [{ attribute: 'tag', type: 'hash' }, { attribute: 'n', type: 'range' }] },
        };
        const domain = await table(tagged);
        const byTag = async (tag: string) => (await storage.get(domain, { table: 'tagged', index: 'by_tag', attributes: { tag } })).items.map((r) => `${r.id}/${r.n}`);
        // No tag: no entry; deleting such a row is an ordinary delete.
        await storage.put(domain, { table: 'tagged', attributes: { id: 'a', n: 1 } });
        await storage.delete(domain, { table: 'tagged', attributes: { id: 'a', n: 1 } });
        assert.deepEqual((await storage.get(domain, { table: 'tagged', attributes: { id: 'a' } })).items, []);
        // Tagged, then moved to another tag: found under the new one only; then removed with its row.
        await storage.put(domain, { table: 'tagged', attributes: { id: 'b', n: 1, tag: 'red' } });
        await storage.put(domain, { table: 'tagged', attributes: { id: 'b', n: 2, tag: 'red' } });
        await storage.put(domain, { table: 'tagged', attributes: { id: 'b', n: 1, tag: 'blue' } });
        assert.deepEqual([await byTag('red'), await byTag('blue')], [['b/2'], ['b/1']]);
        await storage.delete(domain, { table: 'tagged', attributes: { id: 'b', n: 1 } });
        assert.deepEqual([await byTag('red'), await byTag('blue')], [['b/2'], []]);
        // A whole partition deleted takes its entries with it.
        await storage.delete(domain, { table: 'tagged', attributes: { id: 'b' } });
        assert.deepEqual(await byTag('red'), []);
        const onStatic = { ...tagged, table: 'static_index', secondaryIndexes: { by_owner: [{ attribute: 'owner', type: 'hash' }] } };
        await rejectsWith(storage.createTable(domain, 'static_index', onStatic), 400, /static/);
      });
    });

    group('expiry and retention', () => {
      it('never returns a row past its _ttl and sweeps it later', async () => {
        const domain = await table(revisions);
        const [t1, t2] = [tid(Date.now() - 1000), tid(Date.now())];
        // Two seconds: native TTLs count whole seconds of the engine's clock, so one of 1 s may end at once.
        await storage.put(domain, { table: 'revisions', attributes: { key: 'k', tid: t1, _ttl: 2 } });
        await storage.put(domain, { table: 'revisions', attributes: { key: 'k', tid: t2 } });
        assert.equal((await storage.get(domain, { table: 'revisions', attributes: { key: 'k' } })).items.length, 2);
        await sleep(2100);
        assert.deepEqual((await storage.get(domain, { table: 'revisions', attributes: { key: 'k' } })).items.map((r) => r.tid), [t2]);
        // Engines with native TTLs drop expired data themselves; the others sweep it.
        if (!storage.expiresNatively) assert.ok((await storage.sweepExpired()) >= 1);
        // A write over an expired row does not resurrect its old columns.
        await storage.put(domain, { table: 'revisions', attributes: { key: 'x', tid: t1, note: 'old', _ttl: 1 } });
        await sleep(1100);
        await storage.put(domain, { table: 'revisions', attributes: { key: 'x', tid: t1, hits: 1 } });
        const [row] = (await storage.get(domain, { table: 'revisions', attributes: { key: 'x' } })).items;
        assert.deepEqual([row!.note, row!.hits], [null, 1]);
      });

      it("'latest' keeps the newest N revisions per key, others only for the grace period", async () => {
        // Engines count TTLs in whole seconds: a grace of 3 s lasts at least 2.
        const domain = await table({ ...revisions, revisionRetentionPolicy: { type: 'latest', count: 2, grace_ttl: 3 } });
        const ts = [5, 4, 3, 2, 1].map((i) => tid(Date.now() - i * 1000));
        for (const t of ts) await storage.put(domain, { table: 'revisions', attributes: { key: 'k', tid: t } });
        await storage.put(domain, { table: 'revisions', attributes: { key: 'other', tid: ts[0] } });
        assert.equal((await storage.get(domain, { table: 'revisions', attributes: { key: 'k' } })).items.length, 5);
        await sleep(3100);
        const { items } = await storage.get(domain, { table: 'revisions', attributes: { key: 'k' } });
        assert.deepEqual(items.map((r) => r.tid), [ts[4], ts[3]]);
        assert.equal((await storage.get(domain, { table: 'revisions', attributes: { key: 'other' } })).items.length, 1);
      });

      it("'latest' bounds a key written a thousand times", async () => {
        const domain = await table({ ...revisions, revisionRetentionPolicy: { type: 'latest', count: 3, grace_ttl: 0 } });
        for (let i = 0; i < 1000; i++) await storage.put(domain, { table: 'revisions', attributes: { key: 'hot', tid: tid(1_700_000_000_000 + i) } });
        await sleep(5);
        assert.equal((await storage.get(domain, { table: 'revisions', attributes: { key: 'hot' } })).items.length, 3);
        if (!storage.expiresNatively) assert.ok((await storage.sweepExpired()) >= 997);
      });

      it("'latest' and 'latest_hash' keep exactly what they promise under 20 concurrent writers", async () => {
        const latest = await table({ ...revisions, revisionRetentionPolicy: { type: 'latest', count: 3, grace_ttl: 0 } });
        const base = Date.now() - 60_000;
        const written = Array.from({ length: 20 }, (_, i) => tid(base + i * 10));
        await Promise.all(written.map((t) => storage.put(latest, { table: 'revisions', attributes: { key: 'raced', tid: t } })));
        await sleep(5);
        // Every writer's pass may run before or after the others': the newest three survive, and only they.
        assert.deepEqual((await storage.get(latest, { table: 'revisions', attributes: { key: 'raced' } })).items.map((r) => r.tid), written.slice(-3).reverse());
        const lh = await table({ ...grid, table: 'lhr', revisionRetentionPolicy: { type: 'latest_hash', grace_ttl: 0 } });
        await Promise.all(Array.from({ length: 20 }, (_, i) => storage.put(lh, { table: 'lhr', attributes: { p: 'a', x: i, y: i, label: `${i}` } })));
        await sleep(5);
        const left = (await storage.get(lh, { table: 'lhr', attributes: { p: 'a' } })).items;
        assert.ok(left.length <= 1, `latest_hash left ${left.length} rows of one hash key`);
      });

      it("'interval' keeps the newest count of each version group in every window of the interval aligned on the epoch (RESTBase's)", async () => {
        const day = 86_400;
        const at = (d: number, h: number, m = 0) => Date.UTC(2015, 3, d, h, m);
        const versions = { ...pages, table: 'interval_days', secondaryIndexes: {} };
        // Two a day: 04-01's two newest, 04-03's one, 04-04's two newest.
        const two = await table({ ...versions, revisionRetentionPolicy: { type: 'interval', interval: day, count: 2, grace_ttl: 0 } });
        const times = [at(1, 12), at(1, 12, 10), at(1, 12, 50), at(3, 12), at(4, 12), at(4, 12, 30), at(4, 13)];
        for (const t of times) await storage.put(two, { table: versions.table, attributes: { title: 'T', rev: 1000, tid: tid(t) } });
        // Another version group of the same partition keeps its own: windows are per group.
        await storage.put(two, { table: versions.table, attributes: { title: 'T', rev: 1001, tid: tid(at(1, 1)) } });
        const kept = async (domain: string, rev: number) => (await storage.get(domain, { table: versions.table, attributes: { title: 'T', rev } })).items.map((r) => timeuuidMillis(r.tid as string)).sort();
        assert.deepEqual(await kept(two, 1000), [at(1, 12, 10), at(1, 12, 50), at(3, 12), at(4, 12, 30), at(4, 13)]);
        assert.deepEqual(await kept(two, 1001), [at(1, 1)]);
        // One a day, a version every six hours: each day's last, and the third day's only one.
        const one = await table({ ...versions, revisionRetentionPolicy: { type: 'interval', interval: day, count: 1, grace_ttl: 0 } });
        for (let t = at(1, 5); t <= at(3, 5); t += 6 * 3_600_000) await storage.put(one, { table: versions.table, attributes: { title: 'T', rev: 1000, tid: tid(t) } });
        assert.deepEqual(await kept(one, 1000), [at(1, 23), at(2, 23), at(3, 5)]);
      });

      it("'interval' versions let go with a grace TTL are gone for readers the moment it ends", async () => {
        const versions = { ...pages, table: 'interval_grace', secondaryIndexes: {} };
        const domain = await table({ ...versions, revisionRetentionPolicy: { type: 'interval', interval: 3600, count: 1, grace_ttl: 2 } });
        const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000;
        for (const t of [hour + 1, hour + 2]) await storage.put(domain, { table: versions.table, attributes: { title: 'T', rev: 1, tid: tid(t) } });
        const read = async () => (await storage.get(domain, { table: versions.table, attributes: { title: 'T', rev: 1 } })).items.length;
        assert.equal(await read(), 2, 'within its grace TTL');
        await sleep(2100);
        assert.equal(await read(), 1, 'at once past it, whatever the sweep');
      });

      it("'ttl' expires every row after its time", async () => {
        // Two seconds, as above: a native TTL of 1 s may end at once on the engine's whole-second clock.
        const domain = await table({ ...revisions, revisionRetentionPolicy: { type: 'ttl', ttl: 2 } });
        await storage.put(domain, { table: 'revisions', attributes: { key: 'k', tid: tid(Date.now()) } });
        assert.equal((await storage.get(domain, { table: 'revisions', attributes: { key: 'k' } })).items.length, 1);
        await sleep(2100);
        assert.equal((await storage.get(domain, { table: 'revisions', attributes: { key: 'k' } })).items.length, 0);
      });
    });

    group('reads after writes elsewhere', () => {
      // A second handle on the same storage stands for another process (a worker) or machine.
      let other: TableStorage;
      before(async () => {
        other = await openStorage(shared);
      });
      after(async () => {
        await other.close();
      });

      it('answers a repeated read with what another process wrote in between', async () => {
        const domain = await table(revisions);
        const [t1, t2] = [tid(1000), tid(2000)];
        const latest = { table: 'revisions', attributes: { key: 'k' }, proj: ['tid', 'note', 'latest'], limit: 1 };
        await storage.put(domain, { table: 'revisions', attributes: { key: 'k', tid: t1, note: 'one', latest: t1 } });
        for (let i = 0; i < 3; i++) assert.equal((await storage.get(domain, latest)).items[0]!.note, 'one');
        await other.put(domain, { table: 'revisions', attributes: { key: 'k', tid: t2, note: 'two', latest: t2 } });
        assert.deepEqual((await storage.get(domain, latest)).items[0], { tid: t2, note: 'two', latest: t2 });
        await other.put(domain, { table: 'revisions', attributes: { key: 'k', tid: t2, note: 'changed' } });
        assert.equal((await storage.get(domain, latest)).items[0]!.note, 'changed');
        await other.delete(domain, { table: 'revisions', attributes: { key: 'k', tid: t2 } });
        assert.equal((await storage.get(domain, latest)).items[0]!.note, 'one');
        const listing = { table: 'revisions', attributes: {}, distinct: true, proj: ['key'] };
        assert.deepEqual((await storage.get(domain, listing)).items, [{ key: 'k' }]);
        await other.put(domain, { table: 'revisions', attributes: { key: 'k2', tid: t1 } });
        assert.deepEqual((await storage.get(domain, listing)).items.map((r) => r.key).sort(), ['k', 'k2']);
      });

      // Engines that tell cheaply when anything was committed (SQLite) see a change at once;
      // the others within SCHEMA_RECHECK_MS (a table missing under a statement is seen at once).
      const soon = async <T>(operation: () => Promise<T>): Promise<T> => {
        const deadline = Date.now() + (storage.backend === 'sqlite' ? 0 : SCHEMA_RECHECK_MS + 1000);
        for (;;) {
          try {
            return await operation();
          } catch (err) {
            if (Date.now() >= deadline) throw err;
            await sleep(100);
          }
        }
      };

      it('sees tables another process migrated, recreated or dropped', async () => {
        const domain = await table(revisions);
        const row = { table: 'revisions', attributes: { key: 'k' }, proj: ['note', 'extra'], limit: 1 };
        await storage.put(domain, { table: 'revisions', attributes: { key: 'k', tid: tid(1000), note: 'one' } });
        await rejectsWith(storage.get(domain, row), 400, /proj/);
        await other.createTable(domain, 'revisions', { ...revisions, version: 2, attributes: { ...revisions.attributes, extra: 'string' } });
        // Written at once: a write refused by definitions out of date asks whether they changed.
        await storage.put(domain, { table: 'revisions', attributes: { key: 'k', tid: tid(2000), note: 'two', extra: 'added' } });
        assert.deepEqual((await storage.get(domain, row)).items, [{ note: 'two', extra: 'added' }]);

        await other.dropTable(domain, 'revisions');
        await other.createTable(domain, 'revisions', { table: 'revisions', attributes: { key: 'string', n: 'int' }, index: [{ attribute: 'key', type: 'hash' }] });
        await storage.put(domain, { table: 'revisions', attributes: { key: 'k', n: 7 } });
        assert.deepEqual(withoutTid((await storage.get(domain, { table: 'revisions', attributes: { key: 'k' } })).items), [{ key: 'k', n: 7 }]);

        await other.dropTable(domain, 'revisions');
        await rejectsWith(storage.get(domain, { table: 'revisions', attributes: { key: 'k' } }), 404, /does not exist/);
        await rejectsWith(storage.put(domain, { table: 'revisions', attributes: { key: 'k', n: 8 } }), 404, /does not exist/);
      });

      it("writes a new row (`if: 'not exists'`) on the definition another process has just changed", async () => {
        const domain = await table(revisions);
        const fresh = (attributes: Record<string, unknown>) => storage.put(domain, { table: 'revisions', attributes, if: 'not exists' });
        await fresh({ key: 'k', tid: tid(1000), note: 'one' });
        await other.createTable(domain, 'revisions', { ...revisions, version: 2, attributes: { ...revisions.attributes, extra: 'string' } });
        const second = tid(2000);
        await soon(() => fresh({ key: 'k', tid: second, note: 'two', extra: 'added' }));
        await rejectsWith(fresh({ key: 'k', tid: second, note: 'again' }), 412, /exists/);
        // Recreated with another key and type: the row is written as the new definition says, once.
        await other.dropTable(domain, 'revisions');
        await other.createTable(domain, 'revisions', { table: 'revisions', attributes: { key: 'string', note: 'int' }, index: [{ attribute: 'key', type: 'hash' }] });
        await soon(() => fresh({ key: 'k', note: 7 }));
        await rejectsWith(fresh({ key: 'k', note: 8 }), 412, /exists/);
        assert.deepEqual(withoutTid((await storage.get(domain, { table: 'revisions', attributes: { key: 'k' } })).items), [{ key: 'k', note: 7 }]);
      });

      it('reads on the definition another process has just changed, with rows and without', async () => {
        const domain = await table(revisions);
        const query = { table: 'revisions', attributes: { key: 'k' }, limit: 1 };
        await storage.put(domain, { table: 'revisions', attributes: { key: 'k', tid: tid(1000), note: 'one' } });
        assert.equal((await storage.get(domain, { ...query, proj: ['note'] })).items[0]!.note, 'one');
        // A column added elsewhere is read, and named, by the next read here (no write in between).
        await other.createTable(domain, 'revisions', { ...revisions, version: 2, attributes: { ...revisions.attributes, extra: 'string' } });
        await other.put(domain, { table: 'revisions', attributes: { key: 'k', tid: tid(2000), note: 'two', extra: 'added' } });
        await soon(async () => assert.deepEqual((await storage.get(domain, { ...query, proj: ['note', 'extra'] })).items, [{ note: 'two', extra: 'added' }]));
        await soon(async () => assert.equal((await storage.get(domain, query)).items[0]!.extra, 'added'));
        // Recreated with another type under the same attribute name: rows decode as the new definition says.
        await other.dropTable(domain, 'revisions');
        await other.createTable(domain, 'revisions', { table: 'revisions', attributes: { key: 'string', note: 'int' }, index: [{ attribute: 'key', type: 'hash' }] });
        await soon(async () => assert.deepEqual((await storage.get(domain, { table: 'revisions', attributes: { key: 'k' } })).items, []));
        await other.put(domain, { table: 'revisions', attributes: { key: 'k', note: 7 } });
        assert.deepEqual(withoutTid((await storage.get(domain, { table: 'revisions', attributes: { key: 'k' } })).items), [{ key: 'k', note: 7 }]);
      });

      it('reads on the definition another process has just changed after reads that found nothing', async () => {
        const domain = await table(revisions);
        const query = { table: 'revisions', attributes: { key: 'k' }, limit: 1 };
        // Read again and again, finding nothing (an engine may keep what it learnt from them).
        for (let i = 0; i < 3; i++) assert.deepEqual((await storage.get(domain, query)).items, []);
        await other.createTable(domain, 'revisions', { ...revisions, version: 2, attributes: { ...revisions.attributes, extra: 'string' } });
        await other.put(domain, { table: 'revisions', attributes: { key: 'k', tid: tid(2000), note: 'two', extra: 'added' } });
        await soon(async () => assert.deepEqual((await storage.get(domain, { ...query, proj: ['note', 'extra'] })).items, [{ note: 'two', extra: 'added' }]));
        await other.dropTable(domain, 'revisions');
        await soon(async () => rejectsWith(storage.get(domain, query), 404, /does not exist/));
      });

      it('does not let one reader change what the next one reads', async () => {
        const domain = await table(everyType);
        await storage.put(domain, { table: 'types', attributes: { id: 'a', j: { nested: { n: 1 } }, ss: ['x'] } });
        const query = { table: 'types', attributes: { id: 'a' }, proj: ['j', 'ss'] };
        const [first] = (await storage.get(domain, query)).items;
        // A reader that edits its rows (strict-mode code fails loudly where rows are shared).
        try {
          (first!.j as { nested: { n: number } }).nested.n = 2;
          (first!.ss as string[]).push('y');
          first!.j = null;
        } catch (e) {
          assert.ok(e instanceof TypeError, String(e));
        }
        assert.deepEqual((await storage.get(domain, query)).items[0], { j: { nested: { n: 1 } }, ss: ['x'] });
      });

      it('stops answering a row the moment its TTL passes, however often it was read', async () => {
        const domain = await table(revisions);
        const written = Date.now();
        await storage.put(domain, { table: 'revisions', attributes: { key: 'k', tid: tid(1000), _ttl: 2 } });
        const query = { table: 'revisions', attributes: { key: 'k' } };
        // Native TTLs count in whole seconds of the engine's clock: such a row may go up to a second early.
        const surely = written + (storage.expiresNatively ? 900 : 1850);
        while (Date.now() < surely) {
          assert.equal((await storage.get(domain, query)).items.length, 1);
          await sleep(50);
        }
        await sleep(written + 2150 - Date.now());
        assert.equal((await storage.get(domain, query)).items.length, 0);
      });
    });

    group('isolation and concurrency', () => {
      it('keeps tables of different domains apart', async () => {
        const [d1, d2] = [await table(grid), await table(grid)];
        await storage.put(d1, { table: 'grid', attributes: { p: 'p', x: 1, y: 1, label: 'one' } });
        await storage.put(d2, { table: 'grid', attributes: { p: 'p', x: 1, y: 1, label: 'two' } });
        assert.deepEqual((await storage.get(d1, { table: 'grid' })).items.map((r) => r.label), ['one']);
        await storage.dropTable(d2, 'grid');
        assert.deepEqual((await storage.get(d1, { table: 'grid' })).items.map((r) => r.label), ['one']);
      });

      it("lets exactly one of 20 concurrent 'not exists' writes of one key win", async () => {
        const domain = await table(revisions);
        const t = tid(Date.now());
        const results = await Promise.allSettled(
          Array.from({ length: 20 }, (_, i) => storage.put(domain, { table: 'revisions', attributes: { key: 'k', tid: t, hits: i }, if: 'not exists' })),
        );
        const won = results.filter((r) => r.status === 'fulfilled');
        const lost = results.filter((r) => r.status === 'rejected' && (r.reason as StorageError).kind === 'condition-failed');
        assert.deepEqual([won.length, lost.length], [1, 19]);
        const winner = results.findIndex((r) => r.status === 'fulfilled');
        const [row] = (await storage.get(domain, { table: 'revisions', attributes: { key: 'k' } })).items;
        assert.equal(row!.hits, winner);
      });

      it('lets exactly one of 20 concurrent CAS updates of a static column win', async () => {
        const domain = await table(revisions);
        const base = tid(Date.now() - 10_000);
        await storage.put(domain, { table: 'revisions', attributes: { key: 'k', tid: base, latest: base } });
        const candidates = Array.from({ length: 20 }, (_, i) => tid(Date.now() + i));
        const results = await Promise.allSettled(
          candidates.map((t) => storage.put(domain, { table: 'revisions', attributes: { key: 'k', tid: t, latest: t }, if: { latest: { eq: base } } })),
        );
        assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
        assert.ok(results.every((r) => r.status === 'fulfilled' || (r.reason as StorageError).kind === 'condition-failed'));
        const winner = candidates[results.findIndex((r) => r.status === 'fulfilled')];
        const { items } = await storage.get(domain, { table: 'revisions', attributes: { key: 'k' } });
        assert.equal(items.length, 2, 'losers wrote no rows');
        assert.ok(items.every((r) => r.latest === winner));
      });
    });

    group('hostile schemas and values (the same 400 on every backend)', () => {
      it('keeps keys apart that differ only in case, trailing spaces, Unicode normalization or by an astral character', async () => {
        const domain = await table(grid);
        const keys = ['Foo', 'foo', 'FOO', 'foo ', 'Cafe\u0301', 'Café', 'ß', 'ss', '😀', '😁'];
        for (const [i, p] of keys.entries()) await storage.put(domain, { table: 'grid', attributes: { p, x: 1, y: 1, label: `row ${i}` } });
        for (const [i, p] of keys.entries()) {
          assert.deepEqual((await storage.get(domain, { table: 'grid', attributes: { p } })).items.map((r) => [r.p, r.label]), [[p, `row ${i}`]], JSON.stringify(p));
        }
        const listed = (await storage.get(domain, { table: 'grid', proj: ['p'], distinct: true, limit: 100 })).items.map((r) => r.p as string);
        // Partitions list in code point order (UTF-8's byte order) on the SQL engines; by token on Cassandra.
        assert.deepEqual([...listed].sort(), [...keys].sort());
        if (storage.backend !== 'cassandra') assert.deepEqual(listed, [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
      });

      it('refuses names that only exist on Object.prototype, differ only in case, or are engine columns', async () => {
        const domain = freshDomain();
        const bad: [string, unknown][] = [
          ['index on an inherited name', { attributes: { a: 'string' }, index: [{ attribute: 'toString', type: 'hash' }] }],
          ['index on constructor', { attributes: { a: 'string' }, index: [{ attribute: 'a', type: 'hash' }, { attribute: 'constructor', type: 'range' }] }],
          ['case-folded duplicate', { attributes: { a: 'string', A: 'string' }, index: [{ attribute: 'a', type: 'hash' }] }],
          ['PostgreSQL system column', { attributes: { k: 'string', xmin: 'int' }, index: [{ attribute: 'k', type: 'hash' }] }],
          ['ctid in another case', { attributes: { k: 'string', CTID: 'int' }, index: [{ attribute: 'k', type: 'hash' }] }],
          ['SQLite rowid', { attributes: { rowid: 'int' }, index: [{ attribute: 'rowid', type: 'hash' }] }],
          ['negative gc_grace_seconds', { attributes: { k: 'string' }, index: [{ attribute: 'k', type: 'hash' }], options: { gc_grace_seconds: -1 } }],
          ['gc_grace_seconds as text', { attributes: { k: 'string' }, index: [{ attribute: 'k', type: 'hash' }], options: { gc_grace_seconds: '600' } }],
          ['unknown update pattern', { attributes: { k: 'string' }, index: [{ attribute: 'k', type: 'hash' }], options: { updates: { pattern: "'; DROP TABLE x" } } }],
        ];
        for (const [why, schema] of bad) await rejectsWith(storage.createTable(domain, 'bad', schema), 400).catch((e) => assert.fail(`${why}: ${e}`));
        const domain2 = await table(grid);
        await rejectsWith(storage.get(domain2, { table: 'grid', index: 'toString', attributes: { p: 'a' } }), 400);
        await rejectsWith(storage.get(domain2, { table: 'grid', index: '__proto__', attributes: { p: 'a' } }), 400);
        await rejectsWith(storage.put(domain2, { table: 'grid', attributes: { p: 'a', x: 1, y: 1, toString: 'x' } }), 400);
        await rejectsWith(storage.put(domain2, { table: 'grid', attributes: JSON.parse('{"p":"a","x":1,"y":1,"__proto__":{"label":"x"}}') }), 400);
        await rejectsWith(storage.put(domain2, { table: 'grid', attributes: { p: 'a', x: 1, y: 1 }, if: { hasOwnProperty: { eq: 1 } } }), 400);
      });

      it('refuses decimals and timestamps beyond what every engine can hold, at write time', async () => {
        const domain = await table(everyType);
        for (const attributes of [
          { id: 'x', d: '1e999999999' },
          { id: 'x', d: '-1e-5000' },
          { id: 'x', d: '1'.repeat(1001) },
          { id: 'x', d: 'NaN' },
          { id: 'x', d: '1e' },
          { id: 'x', ts: 9e15 },
          { id: 'x', ts: -1e15 },
          { id: 'x', ts: '+275760-09-13T00:00:00.000Z' },
        ]) {
          await rejectsWith(storage.put(domain, { table: 'types', attributes }), 400).catch((e) => assert.fail(`${JSON.stringify(attributes)}: ${e}`));
        }
        assert.deepEqual((await storage.get(domain, { table: 'types' })).items, [], 'nothing was written');
        await storage.put(domain, { table: 'types', attributes: { id: 'edge', d: '-1e999', ts: '9999-12-31T23:59:59.999Z' } });
        const [row] = (await storage.get(domain, { table: 'types', attributes: { id: 'edge' } })).items;
        assert.equal(row!.d, `-1${'0'.repeat(999)}`);
        assert.equal(row!.ts, '9999-12-31T23:59:59.999Z');
      });

      it('sorts and compares decimal range keys by value, with one canonical form', async () => {
        const domain = await table({
          table: 'dec',
          attributes: { p: 'string', d: 'decimal' },
          index: [{ attribute: 'p', type: 'hash' }, { attribute: 'd', type: 'range', order: 'asc' }],
        });
        const values = ['9', '10', '100', '2.5', '-3', '-30', '-2.75', '0', '0.001', '1e3', '12.50', '-0.0001'];
        for (const d of values) await storage.put(domain, { table: 'dec', attributes: { p: 'a', d } });
        const all = (await storage.get(domain, { table: 'dec', attributes: { p: 'a' } })).items.map((r) => r.d);
        assert.deepEqual(all, ['-30', '-3', '-2.75', '-0.0001', '0', '0.001', '2.5', '9', '10', '12.5', '100', '1000']);
        const above5 = (await storage.get(domain, { table: 'dec', attributes: { p: 'a', d: { gt: 5 } } })).items.map((r) => r.d);
        assert.deepEqual(above5, ['9', '10', '12.5', '100', '1000']);
        const between = (await storage.get(domain, { table: 'dec', attributes: { p: 'a', d: { between: ['-3', '0.001'] } } })).items.map((r) => r.d);
        assert.deepEqual(between, ['-3', '-2.75', '-0.0001', '0', '0.001']);
        const [exact] = (await storage.get(domain, { table: 'dec', attributes: { p: 'a', d: '12.500' } })).items;
        assert.equal(exact?.d, '12.5', '12.500 finds the row written as 12.50');
        const desc = (await storage.get(domain, { table: 'dec', attributes: { p: 'a' }, order: { d: 'desc' }, limit: 3 })).items.map((r) => r.d);
        assert.deepEqual(desc, ['1000', '100', '12.5']);
      });
    });

    group("RESTBase's model, in full", () => {
      it('makes the time-uuid of a row whose timeuuid range key a write leaves out, as RESTBase did; a static-only write still writes no row', async () => {
        const domain = await table(revisions);
        const before = Date.now();
        await storage.put(domain, { table: 'revisions', attributes: { key: 'k', note: 'no tid given' } });
        await storage.put(domain, { table: 'revisions', attributes: { key: 'k', latest: tid(before) } });
        const { items } = await storage.get(domain, { table: 'revisions', attributes: { key: 'k' } });
        assert.equal(items.length, 1, 'one row: the static-only write made none');
        assert.match(String(items[0]!.tid), TIMEUUID);
        assert.ok(Math.abs(timeuuidMillis(items[0]!.tid as string) - before) < 60_000, 'made at the write');
        assert.equal(items[0]!.note, 'no tid given');
        const grid3 = await table({ ...pages, table: 'pages3', secondaryIndexes: {} });
        await rejectsWith(storage.put(grid3, { table: 'pages3', attributes: { title: 'T', comment: 'no rev' } }), 400, /rev/);
        await storage.put(grid3, { table: 'pages3', attributes: { title: 'T', rev: 5 } });
        assert.equal((await storage.get(grid3, { table: 'pages3', attributes: { title: 'T', rev: 5 } })).items.length, 1, 'the other range keys given, only the tid is made');
      });

      it("takes operators in either case ({BETWEEN: [a, b]}, as RESTBase's clients send them)", async () => {
        const domain = await table(grid);
        for (let x = 0; x < 5; x++) await storage.put(domain, { table: 'grid', attributes: { p: 'a', x, y: 0 } });
        const { items } = await storage.get(domain, { table: 'grid', attributes: { p: 'a', x: { BETWEEN: [1, 3] } } });
        assert.deepEqual(items.map((r) => r.x), [1, 2, 3]);
        assert.deepEqual((await storage.get(domain, { table: 'grid', attributes: { p: 'a', x: { Gt: 3 } } })).items.map((r) => r.x), [4]);
        await rejectsWith(storage.get(domain, { table: 'grid', attributes: { p: 'a', x: { NEAR: 3 } } }), 400, /NEAR/);
        // An int given as a decimal string, as RESTBase's Cassandra driver took it; anything else is refused.
        assert.deepEqual((await storage.get(domain, { table: 'grid', attributes: { p: 'a', x: '2' } })).items.map((r) => r.x), [2]);
        await rejectsWith(storage.get(domain, { table: 'grid', attributes: { p: 'a', x: '2.5' } }), 400);
      });

      it('keeps the schema as it was put, beside its definition', async () => {
        const given = { table: 'kept', options: { durability: 'low' }, attributes: { k: 'string', v: 'int' }, index: [{ attribute: 'k', type: 'hash' }] };
        const domain = freshDomain();
        await storage.createTable(domain, 'kept', given);
        const schema = await storage.getSchema(domain, 'kept');
        assert.deepEqual(schema.given, given);
        assert.equal(schema.attributes._tid, 'timeuuid', 'the definition has its defaults');
      });

      const numbers = {
        table: 'numbers',
        attributes: { p: 'string', n: 'long', v: 'varint', sl: 'set<long>', sd: 'set<decimal>', sts: 'set<timestamp>', sb: 'set<boolean>', tu: 'set<timeuuid>' },
        index: [{ attribute: 'p', type: 'hash' }, { attribute: 'n', type: 'range', order: 'asc' }],
      };

      it('keeps long and varint exact beyond 2^53 (strings in JSON), sorted as numbers in range keys', async () => {
        const domain = await table(numbers);
        const values = ['9223372036854775807', '-9223372036854775808', '9007199254740993', -1, 0, 42, '-9007199254740993'];
        for (const n of values) await storage.put(domain, { table: 'numbers', attributes: { p: 'a', n, v: n } });
        const items = (await storage.get(domain, { table: 'numbers', attributes: { p: 'a' } })).items;
        assert.deepEqual(items.map((r) => r.n), ['-9223372036854775808', '-9007199254740993', -1, 0, 42, '9007199254740993', '9223372036854775807']);
        assert.deepEqual(items.map((r) => r.v), items.map((r) => r.n), 'varint is exact the same way');
        const big = (await storage.get(domain, { table: 'numbers', attributes: { p: 'a', n: { gt: '9007199254740992' } } })).items.map((r) => r.n);
        assert.deepEqual(big, ['9007199254740993', '9223372036854775807']);
        const [one] = (await storage.get(domain, { table: 'numbers', attributes: { p: 'a', n: '9223372036854775807' } })).items;
        assert.equal(one?.v, '9223372036854775807');
        for (const n of [2 ** 53 + 2, '9223372036854775808', '1.5', 'x', 1e300]) {
          await rejectsWith(storage.put(domain, { table: 'numbers', attributes: { p: 'b', n } }), 400).catch((e) => assert.fail(`${n}: ${e}`));
        }
      });

      it('sorts sets of every type by value, and reads an empty set back as null', async () => {
        const domain = await table(numbers);
        const t1 = tid(1_600_000_000_000);
        const t2 = tid(1_700_000_000_000);
        await storage.put(domain, {
          table: 'numbers',
          attributes: {
            p: 's', n: 1, sl: ['10', 9, '9223372036854775807', -3, 9], sd: ['10', '9.5', '-1e3', '0.001'],
            sts: ['2020-01-01T00:00:00.000Z', '1999-01-01T00:00:00.000Z'], sb: [true, false, true], tu: [t2, t1],
          },
        });
        await storage.put(domain, { table: 'numbers', attributes: { p: 's', n: 2, sl: [], sd: [] } });
        const [first, second] = (await storage.get(domain, { table: 'numbers', attributes: { p: 's' } })).items;
        assert.deepEqual(first!.sl, [-3, 9, 10, '9223372036854775807']);
        assert.deepEqual(first!.sd, ['-1000', '0.001', '9.5', '10']);
        assert.deepEqual(first!.sts, ['1999-01-01T00:00:00.000Z', '2020-01-01T00:00:00.000Z']);
        assert.deepEqual(first!.sb, [false, true]);
        assert.deepEqual(first!.tu, [t1, t2]);
        assert.equal(second!.sl, null);
        assert.equal(second!.sd, null);
      });

      it("'latest_hash' keeps only each hash key's first row in the table's own order: the first range key as declared, then the newest tid (RESTBase's)", async () => {
        const hour = (h: number) => Date.UTC(2016, 0, 1, h);
        for (const [order, writes, left] of [
          ['desc', [[1000, 5], [1001, 11], [1001, 12], [1002, 17], [1002, 18]], [1002, 18]],
          ['asc', [[1002, 17], [1002, 18], [1000, 5], [1001, 11], [1001, 12], [1000, 6]], [1000, 6]],
        ] as const) {
          const schema = { ...pages, table: `lh_${order}`, secondaryIndexes: {}, index: [pages.index[0]!, { attribute: 'rev', type: 'range', order }, { attribute: 'tid', type: 'range', order: 'desc' }] };
          const domain = await table({ ...schema, revisionRetentionPolicy: { type: 'latest_hash', grace_ttl: 0 } });
          for (const [rev, h] of writes) await storage.put(domain, { table: schema.table, attributes: { title: 'T', rev, tid: tid(hour(h)) } });
          await storage.put(domain, { table: schema.table, attributes: { title: 'Other', rev: 1, tid: tid(hour(1)) } });
          const { items } = await storage.get(domain, { table: schema.table, attributes: { title: 'T' } });
          assert.deepEqual(items.map((r) => [r.rev, timeuuidMillis(r.tid as string)]), [[left[0], hour(left[1])]], order);
          assert.equal((await storage.get(domain, { table: schema.table, attributes: { title: 'Other' } })).items.length, 1, 'other partitions keep theirs');
        }
        const graced = await table({ ...grid, table: 'lh', revisionRetentionPolicy: { type: 'latest_hash', grace_ttl: 1 } });
        for (const [x, y] of [[5, 2], [3, 3], [1, 1]]) await storage.put(graced, { table: 'lh', attributes: { p: 'a', x, y, label: `${x}/${y}` } });
        await sleep(1100);
        assert.deepEqual((await storage.get(graced, { table: 'lh', attributes: { p: 'a' } })).items.map((r) => r.label), ['1/1'], 'x ascending: the least x stays');
        assert.deepEqual((await storage.getSchema(graced, 'lh')).revisionRetentionPolicy, { type: 'latest_hash', grace_ttl: 1 });
        // Refused where it cannot mean that: with secondary indexes, or keyed by a timeuuid alone.
        await rejectsWith(storage.createTable(freshDomain(), 'lhi', { ...pages, table: 'lhi', revisionRetentionPolicy: { type: 'latest_hash' } }), 400, /latest_hash.*secondary indexes/);
        await rejectsWith(storage.createTable(freshDomain(), 'revisions', { ...revisions, revisionRetentionPolicy: { type: 'latest_hash' } }), 400, /latest_hash.*range key other than a timeuuid/);
      });

      it("indexes a versioned table's current versions only: an entity's newest tid, with its projected values (RESTBase's)", async () => {
        const schema = {
          table: 'versioned_index',
          attributes: { key: 'string', tid: 'timeuuid', latestTid: 'timeuuid', uri: 'string', body: 'blob', restrictions: 'set<string>' },
          index: [{ attribute: 'key', type: 'hash' }, { attribute: 'tid', type: 'range', order: 'desc' }],
          secondaryIndexes: { by_uri: [{ attribute: 'uri', type: 'hash' }, { attribute: 'body', type: 'proj' }] },
        };
        const domain = await table(schema);
        let t = Date.now() - 60_000;
        const put = (key: string, uri: string, body: string) => storage.put(domain, { table: schema.table, attributes: { key, tid: tid(t += 10), uri, body: Buffer.from(body) } });
        for (const n of [1, 2, 3]) await put('test', `uri${n}`, `body${n}`);
        for (const n of [1, 2, 3]) await put('test2', `uri${n}`, `test_body${n}`);
        await put('test2', 'uri3', 'test_body3_modified');
        const byUri = async (uri: string) => (await storage.get(domain, { table: schema.table, index: 'by_uri', attributes: { uri }, proj: ['key', 'uri', 'body'] })).items;
        assert.deepEqual(await byUri('uri1'), [], 'no current version has it');
        assert.deepEqual(await byUri('uri2'), []);
        assert.deepEqual((await byUri('uri3')).map((r) => [r.key, r.uri, Buffer.from(r.body as Buffer).toString()]), [['test2', 'uri3', 'test_body3_modified'], ['test', 'uri3', 'body3']], "the table's keys descending");
        // Paging over a partition of versions: each once, and the page after the last is empty.
        const seen: string[] = [];
        let next: string | undefined;
        let pages = 0;
        do {
          const page = await storage.get(domain, { table: schema.table, attributes: { key: 'test2' }, limit: 2, ...(next ? { next } : {}) });
          seen.push(...page.items.map((r) => r.tid as string));
          next = page.next;
          pages++;
        } while (next && pages < 5);
        assert.equal(seen.length, 4);
        assert.equal(new Set(seen).size, 4);
        // An entity is the key without its tid: other range keys make other entities.
        const ranged = await table({ ...schema, table: 'ranged_index', attributes: { key: 'string', range: 'int', tid: 'timeuuid', uri: 'string', body: 'string' },
          index: [{ attribute: 'key', type: 'hash' }, { attribute: 'range', type: 'range' }, { attribute: 'tid', type: 'range', order: 'desc' }] });
        await storage.put(ranged, { table: 'ranged_index', attributes: { key: 'test1', range: 1, tid: tid(t += 10), uri: 'uri1', body: 'body1' } });
        await storage.put(ranged, { table: 'ranged_index', attributes: { key: 'test1', range: 2, tid: tid(t += 10), uri: 'uri2', body: 'body2' } });
        assert.deepEqual((await storage.get(ranged, { table: 'ranged_index', index: 'by_uri', attributes: { uri: 'uri1' }, proj: ['key', 'uri', 'body'] })).items, [{ key: 'test1', uri: 'uri1', body: 'body1' }]);
      });

      it('refuses a migration that drops an attribute an index uses, naming it as no longer in the attributes', async () => {
        const domain = await table({ ...pages, table: 'dropped', secondaryIndexes: { by_comment: [{ attribute: 'comment', type: 'hash' }] } });
        const { comment: _c, ...noComment } = pages.attributes;
        await rejectsWith(storage.createTable(domain, 'dropped', { ...pages, table: 'dropped', version: 2, attributes: noComment, secondaryIndexes: { by_comment: [{ attribute: 'comment', type: 'hash' }] } }), 400, /"comment".*is not in attributes/);
      });

      it('migrates to a version without an attribute or an index, whose data is gone at once', async () => {
        const domain = await table(pages);
        await storage.put(domain, { table: 'pages', attributes: { title: 'T', rev: 1, tid: tid(1), comment: 'secret' } });
        const { comment: _c, ...noComment } = pages.attributes;
        const { rev: _r, ...noRev } = pages.attributes;
        await rejectsWith(storage.createTable(domain, 'pages', { ...pages, version: 2, attributes: noRev }), 400);
        await rejectsWith(storage.createTable(domain, 'pages', { ...pages, version: 2, attributes: { ...pages.attributes, title: undefined } }), 400);
        const withIndexOnComment = { ...pages, version: 2, secondaryIndexes: { by_comment: [{ attribute: 'comment', type: 'hash' }] } };
        assert.equal(await storage.createTable(domain, 'pages', withIndexOnComment), 'updated');
        await rejectsWith(storage.createTable(domain, 'pages', { ...withIndexOnComment, version: 3, attributes: noComment }), 400, /secondaryIndexes.by_comment names unknown attribute "comment": index element .* is not in attributes/);
        assert.equal(await storage.createTable(domain, 'pages', { ...pages, version: 3, attributes: noComment, secondaryIndexes: {} }), 'updated');
        const [row] = (await storage.get(domain, { table: 'pages', attributes: { title: 'T' } })).items;
        assert.deepEqual(Object.keys(row!).sort(), ['rev', 'tid', 'title']);
        await rejectsWith(storage.get(domain, { table: 'pages', index: 'by_rev', attributes: { rev: 1 } }), 400);
        await rejectsWith(storage.put(domain, { table: 'pages', attributes: { title: 'T', rev: 2, tid: tid(2), comment: 'x' } }), 400);
        assert.equal(await storage.createTable(domain, 'pages', { ...pages, version: 4 }), 'updated');
        const [again] = (await storage.get(domain, { table: 'pages', attributes: { title: 'T' } })).items;
        assert.equal(again!.comment, null, 'a re-added attribute starts empty');
      });

      it('reads the seconds a row has left with withTTL', async () => {
        const domain = await table(revisions);
        await storage.put(domain, { table: 'revisions', attributes: { key: 'k', tid: tid(1), _ttl: 100 } });
        await storage.put(domain, { table: 'revisions', attributes: { key: 'k', tid: tid(2) } });
        const items = (await storage.get(domain, { table: 'revisions', attributes: { key: 'k' }, withTTL: true })).items;
        assert.equal(items[0]!._ttl, null, 'no TTL');
        assert.ok((items[1]!._ttl as number) > 95 && (items[1]!._ttl as number) <= 100, String(items[1]!._ttl));
        assert.equal((await storage.get(domain, { table: 'revisions', attributes: { key: 'k' } })).items[0]!._ttl, undefined);
        await rejectsWith(storage.get(domain, { table: 'revisions', withTTL: 'yes' } as never), 400);
      });

      it('refuses queries a distributed engine could only answer by scanning or filtering', async () => {
        const domain = await table(grid);
        const refused = [
          { attributes: { p: 'a', x: { gt: 1 }, y: { lt: 5 } } },
          { attributes: { p: 'a', y: 3 } },
          { attributes: { x: 1 } },
          { attributes: { x: { gt: 1 } } },
          { attributes: { p: 'a' }, order: { x: 'desc', y: 'desc' } },
          { order: { x: 'desc' } },
          { attributes: { p: 'a', label: 'x' } },
          { attributes: { p: 'a' }, order: { label: 'asc' } },
        ];
        for (const query of refused) await rejectsWith(storage.get(domain, { table: 'grid', ...query } as never), 400).catch((e) => assert.fail(`${JSON.stringify(query)}: ${e}`));
        for (const query of [{ attributes: { p: 'a', x: 1, y: { lt: 5 } } }, { attributes: { p: 'a', x: { gt: 1 } } }, { attributes: { p: 'a' }, order: { x: 'desc', y: 'asc' } }, {}]) {
          await storage.get(domain, { table: 'grid', ...query } as never);
        }
      });

      it('answers a schema with every default filled in and its domain; PUT back, it changes nothing', async () => {
        const domain = await table(pages);
        const schema = await storage.getSchema(domain, 'pages');
        assert.equal(schema.domain, domain);
        assert.equal(schema.table, 'pages');
        assert.deepEqual(schema.revisionRetentionPolicy, { type: 'all' });
        assert.deepEqual(schema.options, {});
        assert.equal(schema.index.find((e) => e.attribute === 'rev')?.order, 'desc');
        assert.equal(await storage.createTable(domain, 'pages', JSON.parse(JSON.stringify(schema))), 'unchanged');
        await rejectsWith(storage.createTable(domain, 'pages', { ...schema, domain: 'other.example' }), 400);
      });
    });

    group('storage groups', () => {
      // The wikis of a farm share one set of tables; each still sees only its own rows.
      let grouped: GroupedStorage;
      let a: string;
      let b: string;
      let alone: string;
      before(async () => {
        const farm = `g${process.pid}x${Date.now().toString(36)}`;
        grouped = new GroupedStorage(storage, (domain) => (domain.endsWith(`.${farm}.test`) ? farm : undefined));
        [a, b] = [`a.${farm}.test`, `b.${farm}.test`];
        alone = freshDomain();
        assert.equal(await grouped.createTable(a, 'pages', pages), 'created');
        assert.equal(await grouped.createTable(b, 'pages', pages), 'unchanged', 'the second wiki of a group finds the table made');
        assert.equal(await grouped.createTable(alone, 'pages', pages), 'created', 'a domain of no group keeps tables of its own');
      });

      it('reads a schema back as a table of its own would, without the group key', async () => {
        const [mine, own] = [await grouped.getSchema(a, 'pages'), await grouped.getSchema(alone, 'pages')];
        assert.equal(mine.domain, a);
        assert.deepEqual({ ...mine, domain: 'x' }, { ...own, domain: 'x' });
        assert.equal(await grouped.createTable(b, 'pages', JSON.parse(JSON.stringify(await grouped.getSchema(b, 'pages')))), 'unchanged');
        await rejectsWith(grouped.createTable(a, 'mine', { attributes: { _domain: 'string', k: 'string' }, index: [{ attribute: 'k', type: 'hash' }] }), 400, /reserved/);
        await rejectsWith(grouped.dropTable(a, 'pages'), 400, /shared/);
      });

      it("holds each wiki to its own rows: point reads, scans, paging, distinct, indexes, deletes and conditions", async () => {
        const tids = [tid(1_700_000_000_000), tid(1_700_000_000_001), tid(1_700_000_000_002)];
        const put = (domain: string, title: string, rev: number, comment: string) =>
          grouped.put(domain, { table: 'pages', attributes: { title, rev, tid: tids[rev], comment } });
        await put(a, 'Same', 1, 'a1');
        await put(a, 'Same', 2, 'a2');
        await put(a, 'OnlyA', 1, 'a');
        await put(b, 'Same', 1, 'b1');
        // A caller naming another wiki's key writes its own wiki's row all the same.
        await grouped.put(b, { table: 'pages', attributes: { title: 'OnlyB', rev: 1, tid: tids[1], comment: 'b', _domain: a } as never });
        const comments = async (domain: string, query: Record<string, unknown> = {}) =>
          (await grouped.get(domain, { table: 'pages', ...query })).items.map((r) => r.comment);
        assert.deepEqual(await comments(a, { attributes: { title: 'Same' } }), ['a2', 'a1']);
        assert.deepEqual(await comments(b, { attributes: { title: 'Same' } }), ['b1']);
        assert.deepEqual((await comments(a)).sort(), ['a', 'a1', 'a2']);
        assert.deepEqual((await comments(b)).sort(), ['b', 'b1']);
        assert.deepEqual(await comments(b, { attributes: { title: 'OnlyA' } }), []);
        assert.deepEqual(await comments(a, { attributes: { _domain: b } }), (await comments(a)), 'a query cannot name another wiki');
        const items = (await grouped.get(a, { table: 'pages', attributes: { title: 'Same' } })).items;
        assert.ok(items.every((row) => !('_domain' in row)), 'the group key never shows');
        // Paged one row at a time, a scan still covers the wiki's rows alone.
        const seen: unknown[] = [];
        let next: string | undefined;
        do {
          const page = await grouped.get(b, { table: 'pages', limit: 1, ...(next ? { next } : {}) });
          seen.push(...page.items.map((r) => r.comment));
          next = page.next;
        } while (next);
        assert.deepEqual(seen.sort(), ['b', 'b1']);
        assert.deepEqual((await grouped.get(a, { table: 'pages', distinct: true, proj: 'title' })).items.map((r) => r.title).sort(), ['OnlyA', 'Same']);
        assert.deepEqual((await grouped.get(b, { table: 'pages', index: 'by_rev', attributes: { rev: 1 } })).items.map((r) => r.title).sort(), ['OnlyB', 'Same']);
        assert.deepEqual((await grouped.get(a, { table: 'pages', index: 'by_rev', attributes: { rev: 2 } })).items.map((r) => r.title), ['Same']);
        await rejectsWith(grouped.put(b, { table: 'pages', attributes: { title: 'Same', rev: 1, tid: tids[1], comment: 'x' }, if: 'not exists' }), 412);
        await grouped.put(b, { table: 'pages', attributes: { title: 'OnlyA', rev: 1, tid: tids[1], comment: 'b-own' }, if: 'not exists' });
        await grouped.delete(b, { table: 'pages', attributes: { title: 'Same' } });
        assert.deepEqual(await comments(b, { attributes: { title: 'Same' } }), []);
        assert.deepEqual(await comments(a, { attributes: { title: 'Same' } }), ['a2', 'a1'], "one wiki's delete leaves another's rows");
      });
    });
  });
}
