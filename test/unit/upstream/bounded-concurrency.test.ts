import assert from 'node:assert/strict';
import { it } from 'node:test';
import { wikiConcurrency } from '../../../src/upstream/wiki.js';
import { HttpError } from '../../../src/util/errors.js';

it("keeps a wiki's requests under way within its bound, and refuses what would wait beyond 64 times as many", async () => {
  const bounded = wikiConcurrency(2);
  let running = 0;
  let most = 0;
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const task = () => bounded(async () => {
    running++;
    most = Math.max(most, running);
    await gate;
    running--;
    return 'done';
  });
  const all = Array.from({ length: 130 }, task);
  await new Promise((r) => setImmediate(r));
  assert.equal(running, 2, 'two under way, the rest waiting');
  await assert.rejects(task(), (e: unknown) => e instanceof HttpError && e.status === 503, 'the 131st is refused');
  open();
  assert.deepEqual(new Set(await Promise.all(all)), new Set(['done']));
  assert.equal(most, 2);
});

it("keeps a farm's requests under way within its bound across its wikis, each wiki in turn", async () => {
  const http = await import('node:http');
  const { Metrics } = await import('../../../src/util/metrics.js');
  const { farmConcurrency, Wiki } = await import('../../../src/upstream/wiki.js');
  let running = 0;
  let most = 0;
  const answered: string[] = [];
  const server = http.createServer((req, res) => {
    const host = req.url!.split('/')[1]!;
    running++;
    most = Math.max(most, running);
    setTimeout(() => {
      running--;
      answered.push(host);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ batchcomplete: true, query: { pages: [{ ns: 0, title: 'A', pageid: 1, lastrevid: 5, revisions: [{ revid: 5, timestamp: '2026-01-01T00:00:00Z' }] }] } }));
    }, 20);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as import('node:net').AddressInfo).port}`;
  try {
    const farm = farmConcurrency(2);
    const wiki = (label: string) => new Wiki(`${label}.farm.test`, { action_api: `${base}/${label}/api.php`, rest_api: `${base}/${label}/rest.php`, concurrency: 8 }, 'ua', new Metrics(false), undefined, '*.farm.test', farm);
    const [a, b] = [wiki('a'), wiki('b')];
    const flood = Array.from({ length: 12 }, () => a.api.page('A'));
    await new Promise((r) => setTimeout(r, 5));
    const other = b.api.page('A');
    await Promise.all([...flood, other]);
    assert.equal(most, 2, 'two under way at the farm at most, though each wiki may have eight');
    assert.ok(answered.indexOf('b') <= 4, `the other wiki's request had its turn after the flood's first few (${answered.join(' ')})`);
  } finally {
    server.close();
  }
});
