import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import zlib from 'node:zlib';
import { openStorage } from '../../src/storage/index.js';
import { admin, request, sleep, sqliteConfig, startServer, type TestServer } from '../helpers.js';

/**
 * Hot answers sent again without handling (http/answer-memo.ts): never one that a read would not
 * give now, whoever changed what it was made from.
 */
describe('answers sent again', () => {
  const storage = sqliteConfig();
  let s: TestServer;
  let bucket: string;
  const gzip = { ...admin, 'accept-encoding': 'gzip' };
  const storageReads = async () => {
    const metric = await s.app.metrics.storageDuration.get();
    return metric.values.filter((v) => v.metricName === 'storage_operation_seconds_count' && v.labels.operation === 'get').reduce((n, v) => n + v.value, 0);
  };
  /** Storage operations that may commit: on SQLite each ends every answer kept (they are kept on its data version). */
  const storageWrites = async () => {
    const metric = await s.app.metrics.storageDuration.get();
    const reading = new Set(['get', 'get_schema', 'list_tables']);
    return metric.values.filter((v) => v.metricName === 'storage_operation_seconds_count' && !reading.has(String(v.labels.operation))).reduce((n, v) => n + v.value, 0);
  };
  /**
   * The storage reads `work` makes over a run with no commit in it: a commit (the process's
   * transaction heartbeat makes one every third of its lease) rightly ends every answer kept, so a
   * run one landed in is made again (five runs at most).
   */
  const readsWithoutCommits = async (work: (attempt: number) => Promise<void>): Promise<number> => {
    for (let attempt = 1; ; attempt++) {
      const [reads, writes] = [await storageReads(), await storageWrites()];
      await work(attempt);
      if ((await storageWrites()) === writes || attempt === 5) return (await storageReads()) - reads;
    }
  };

  before(async () => {
    // The heartbeat's lease long enough that it beats only as the service starts: each beat is a commit (see readsWithoutCommits).
    s = await startServer({ storage, transaction_lease: 3600 });
    bucket = `${s.base}/${s.domain}/sys/key_rev_value/memo`;
    assert.equal((await request(bucket, { method: 'PUT', headers: admin })).status, 201);
  });
  after(() => s.close());

  const put = async (key: string, text: string) => {
    const res = await request(`${bucket}/${key}`, { method: 'PUT', headers: { ...admin, 'content-type': 'text/html' }, body: text });
    assert.equal(res.status, 201, res.text);
  };

  it('sends a hot value again without reading storage, with a request id of its own each time', async () => {
    const html = `<p>${'memo '.repeat(2000)}</p>`;
    await put('hot', html);
    const first = await request(`${bucket}/hot`, { headers: admin });
    for (let i = 0; i < 3; i++) assert.equal((await request(`${bucket}/hot`, { headers: admin })).text, html);
    let answers: Awaited<ReturnType<typeof request>>[] = [];
    const reads = await readsWithoutCommits(async () => {
      answers = await Promise.all(Array.from({ length: 5 }, () => request(`${bucket}/hot`, { headers: admin })));
    });
    assert.equal(reads, 0, 'no storage read');
    assert.ok(answers.every((a) => a.status === 200 && a.text === html));
    assert.equal(new Set(answers.map((a) => a.headers['x-request-id'])).size, 5);
    // Every header the full path wrote, but the request id (and node's own date), written again as it was.
    const kept = (h: Record<string, unknown>) => Object.fromEntries(Object.entries(h).filter(([k]) => k !== 'x-request-id' && k !== 'date'));
    for (const a of answers) assert.deepEqual(kept(a.headers), kept(first.headers));
    const head = await request(`${bucket}/hot`, { method: 'HEAD', headers: admin });
    assert.equal(head.status, 200);
    assert.equal(head.raw.length, 0);
    assert.equal(head.headers['content-length'], answers[0]!.headers['content-length']);
  });

  it('keeps encodings apart: gzip to those who accept it, plain bytes to the others', async () => {
    const html = `<p>${'zip '.repeat(3000)}</p>`;
    await put('enc', html);
    for (let i = 0; i < 3; i++) {
      const zipped = await request(`${bucket}/enc`, { headers: gzip });
      assert.equal(zipped.headers['content-encoding'], 'gzip');
      assert.equal(zlib.gunzipSync(zipped.raw).toString(), html);
      const plain = await request(`${bucket}/enc`, { headers: admin });
      assert.equal(plain.headers['content-encoding'], undefined);
      assert.equal(plain.text, html);
    }
  });

  it('answers the new value at once after a write through the service', async () => {
    await put('w', 'one');
    for (let i = 0; i < 3; i++) assert.equal((await request(`${bucket}/w`, { headers: admin })).text, 'one');
    await put('w', 'two');
    assert.equal((await request(`${bucket}/w`, { headers: admin })).text, 'two');
  });

  it('answers the new value at once after another process writes to the same SQLite file', async () => {
    await put('other', 'before');
    for (let i = 0; i < 3; i++) assert.equal((await request(`${bucket}/other`, { headers: admin })).text, 'before');
    // Another process: its own connections to the file, writing the row directly.
    const elsewhere = await openStorage(storage);
    try {
      const { items } = await elsewhere.get(s.domain, { table: 'key_rev_value.memo', attributes: { key: 'other' }, limit: 1 } as never);
      assert.equal(items.length, 1, 'the bucket table as named in storage');
      await elsewhere.put(s.domain, { table: 'key_rev_value.memo', attributes: { ...items[0], value: Buffer.from('after') } } as never);
    } finally {
      await elsewhere.close();
    }
    assert.equal((await request(`${bucket}/other`, { headers: admin })).text, 'after');
  });

  it('stops answering a row once its TTL has passed', async () => {
    const table = `${s.base}/${s.domain}/sys/table/memo_ttl`;
    const schema = { attributes: { k: 'string', v: 'string' }, index: [{ attribute: 'k', type: 'hash' }] };
    assert.ok([200, 201].includes((await request(table, { method: 'PUT', headers: admin, body: schema })).status));
    assert.equal((await request(`${table}/`, { method: 'PUT', headers: admin, body: { table: 'memo_ttl', attributes: { k: 'a', v: 'x', _ttl: 1 } } })).status, 201);
    for (let i = 0; i < 3; i++) assert.equal((await request(`${table}/a`, { headers: admin })).status, 200);
    await sleep(1100);
    assert.equal((await request(`${table}/a`, { headers: admin })).status, 404);
  });

  it('asks the handler again for conditional requests and for outsiders without the credential', async () => {
    await put('cond', 'c');
    const first = await request(`${bucket}/cond`, { headers: admin });
    const again = await request(`${bucket}/cond`, { headers: { ...admin, 'if-none-match': String(first.headers.etag) } });
    assert.equal(again.status, 304);
    assert.equal((await request(`${bucket}/cond`)).status, 403, 'the memo does not open the internal API');
  });

  it('sends a query by POST again by its body, and the new rows at once after a write', async () => {
    const table = `${s.base}/${s.domain}/sys/table/memo_query`;
    const schema = { attributes: { k: 'string', v: 'string' }, index: [{ attribute: 'k', type: 'hash' }] };
    assert.ok([200, 201].includes((await request(table, { method: 'PUT', headers: admin, body: schema })).status));
    const write = async (k: string, v: string) => assert.equal((await request(`${table}/`, { method: 'PUT', headers: admin, body: { attributes: { k, v } } })).status, 201);
    const query = (k: string) => request(`${table}/_query`, { method: 'POST', headers: admin, body: { attributes: { k } } });
    await write('a', 'one');
    // A key never asked for each run (see readsWithoutCommits).
    for (let attempt = 1; attempt <= 5; attempt++) await write(`b${attempt}`, 'bee');
    for (let i = 0; i < 3; i++) assert.equal((await query('a')).json.items[0].v, 'one');
    const reads = await readsWithoutCommits(async (attempt) => {
      const answers = await Promise.all([query('a'), query('a'), query(`b${attempt}`)]);
      assert.deepEqual(answers.map((a) => a.json.items[0].v), ['one', 'one', 'bee'], 'each body its own answer');
    });
    assert.equal(reads, 1, 'only the query not asked before reads storage');
    await write('a', 'two');
    assert.equal((await query('a')).json.items[0].v, 'two');
    const bad = await request(`${table}/_query`, { method: 'POST', headers: admin, body: { attributes: { nope: 1 } } });
    assert.equal(bad.status, 400, 'a query the table refuses is refused each time');
    assert.equal((await request(`${table}/_query`, { method: 'POST', headers: admin, body: { attributes: { nope: 1 } } })).status, 400);
  });
});
