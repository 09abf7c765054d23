import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { DEFAULT_USER_AGENT } from '../../src/config.js';
import { Metrics } from '../../src/util/metrics.js';
import { rateLimit, Wiki } from '../../src/upstream/wiki.js';

/** A small fake of the Action API: lagged for the first `lagged` reads, recording what it was sent. */
function fakeApi(lagged: number) {
  const seen: { at: number; query: URLSearchParams; agent?: string }[] = [];
  let lags = lagged;
  const server = http.createServer((req, res) => {
    const query = new URL(req.url!, 'http://x').searchParams;
    seen.push({ at: performance.now(), query, agent: req.headers['user-agent'] });
    if (lags > 0 && query.has('maxlag')) {
      lags--;
      res.writeHead(200, { 'content-type': 'application/json', 'retry-after': '1' });
      return res.end(JSON.stringify({ errors: [{ code: 'maxlag', text: 'Waiting for a database server: 7 seconds lagged.' }] }));
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ batchcomplete: true, query: { pages: [{ ns: 0, title: 'A', pageid: 1, lastrevid: 5, revisions: [{ revid: 5, timestamp: '2026-01-01T00:00:00Z' }] }] } }));
  });
  return { server, seen, start: () => new Promise<string>((r) => server.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))) };
}

describe("the wiki's API etiquette", () => {
  const fake = fakeApi(1);
  let url: string;
  before(async () => {
    url = await fake.start();
  });
  after(() => fake.server.close());

  const wiki = (extra: Record<string, unknown>, log = pino({ level: 'silent' })) =>
    new Wiki('wiki.test', { action_api: `${url}/api.php`, rest_api: `${url}/rest.php`, ...extra }, 'wikistore-test (ops@example.org)', new Metrics(false), log);

  it('sends maxlag on reads, and asks again after the Retry-After of a lagged answer', async () => {
    fake.seen.length = 0;
    const page = await wiki({ maxlag: 5 }).api.page('A');
    assert.equal(page.lastrevid, 5);
    assert.equal(fake.seen.length, 2, 'refused for lag once, then answered');
    assert.equal(fake.seen[0]!.query.get('maxlag'), '5');
    assert.ok(fake.seen[1]!.at - fake.seen[0]!.at >= 900, 'waited for the Retry-After');
    assert.equal(fake.seen[0]!.agent, 'wikistore-test (ops@example.org)');
  });

  it('answers 503 with Retry-After when the wiki stays lagged', async () => {
    const lagged = fakeApi(100);
    const base = await lagged.start();
    try {
      const w = new Wiki('wiki.test', { action_api: `${base}/api.php`, rest_api: `${base}/rest.php`, maxlag: 5 }, 'ua', new Metrics(false));
      await assert.rejects(w.api.page('A'), (e: { status?: number; problemType?: string; headers?: Record<string, string> }) => e.status === 503 && e.problemType === 'urn:problem:upstream-lagged');
      assert.equal(lagged.seen.length, 3, 'tried three times in all');
    } finally {
      lagged.server.close();
    }
  });

  it('keeps to requests_per_second, whatever asks at once', async () => {
    fake.seen.length = 0;
    const w = wiki({ requests_per_second: 4 });
    const started = performance.now();
    await Promise.all(Array.from({ length: 10 }, () => w.api.page('A')));
    const took = performance.now() - started;
    assert.equal(fake.seen.length, 10);
    assert.ok(took >= 2000, `10 requests at 4 per second take two seconds or more (took ${took.toFixed(0)} ms)`);
    // Timed where the fake wiki sees them arrive: on a loaded machine an arrival lags its sending by
    // up to a few hundred ms (one run saw more than 100), so the second is allowed that much.
    for (let i = 4; i < fake.seen.length; i++) assert.ok(fake.seen[i]!.at - fake.seen[i - 4]!.at >= 700, `never more than 4 in a second (${fake.seen.map((r) => Math.round(r.at - fake.seen[0]!.at)).join(', ')} ms)`);
  });

  it('refuses at once with 503, instead of queueing without bound, what the rate limit could not let through in time', async () => {
    // 5 a second, at most 1 s of waiting: 5 start now, 5 wait, the rest are refused.
    const schedule = rateLimit(5, 1);
    let ran = 0;
    const started = performance.now();
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => schedule(async () => ++ran)));
    const refused = results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason as { status?: number; problemType?: string; headers?: Record<string, string> });
    assert.equal(ran, 10);
    assert.equal(refused.length, 10);
    assert.ok(refused.every((e) => e.status === 503 && e.problemType === 'urn:problem:upstream-busy' && e.headers?.['retry-after'] === '1'));
    assert.ok(performance.now() - started >= 900, 'the queued ones at the limit');
  });

  it("warns when a Wikimedia wiki would be asked without a contact in the User-Agent", () => {
    const warnings: string[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) });
    new Wiki('en.wikipedia.org', { action_api: 'https://en.wikipedia.org/w/api.php', rest_api: 'https://en.wikipedia.org/w/rest.php' }, DEFAULT_USER_AGENT, new Metrics(false), log);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /User-Agent policy/);
    new Wiki('en.wikipedia.org', { action_api: 'https://en.wikipedia.org/w/api.php', rest_api: 'https://en.wikipedia.org/w/rest.php' }, 'mirror (ops@example.org)', new Metrics(false), log);
    assert.equal(warnings.length, 1, 'not with a User-Agent of its own');
  });
});
