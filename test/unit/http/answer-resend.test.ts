import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { createHttpServer } from '../../../src/http/server.js';
import { Metrics } from '../../../src/util/metrics.js';
import { Router } from '../../../src/router/router.js';

/**
 * The front's answers sent again, against a route whose answers hold while a version in memory is
 * unchanged: whether they still hold is asked when they are written, not when they arrived.
 */
describe('answers sent again by the HTTP front', () => {
  let version = 1;
  let handled = 0;
  let slowMade = 0;
  const slowStarts: number[] = [];
  /** Whether the failing route's answers hold: yes, then the question fails (storage closing, say). */
  const failing = { fails: false, next: () => { if (failing.fails) throw new Error('the store is closing'); return true; } };
  let base: string;
  let failingUrl: string;
  const router = new Router((domain) => domain === 'x.test');
  router.register({
    name: 'probe',
    api: 'v1',
    routes: [
      {
        method: 'GET',
        path: '/failing',
        handler: () => {
          handled++;
          return { status: 200, headers: { 'content-type': 'text/plain' }, body: `made ${handled}`, reuse: { until: Infinity, valid: () => failing.next() } };
        },
      },
      {
        method: 'GET',
        path: '/slow',
        handler: async (req) => {
          const started = performance.now();
          slowStarts.push(started);
          await new Promise((resolve) => setTimeout(resolve, Number(req.query.get('ms') ?? 30)));
          const made = ++slowMade;
          return { status: 200, headers: { 'content-type': 'text/plain' }, body: `slow ${made}`, ...(req.query.has('once') ? {} : { reuse: { until: Date.now() + 60_000 } }) };
        },
      },
      {
        method: 'GET',
        path: '/probe',
        handler: () => {
          handled++;
          const made = version;
          return { status: 200, headers: { 'content-type': 'text/plain' }, body: `version ${made}`, reuse: { until: Infinity, valid: () => version === made } };
        },
      },
    ],
  });
  const metrics = new Metrics(false);
  const server = createHttpServer(router, pino({ level: 'silent' }), metrics, {
    maxBodyBytes: 1024,
    adminToken: undefined,
    headersTimeout: 10,
    requestTimeout: 10,
    keepAliveTimeout: 5,
    maxConnections: 100,
    answerMemoBytes: 1024 * 1024,
  });
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/x.test/v1/probe`;
    failingUrl = base.replace(/probe$/, 'failing');
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const read = async () => (await fetch(base)).text();

  it('sends a kept answer again while it holds, and answers in full once it does not', async () => {
    // Kept once asked for a second time (a scan's single reads are not kept).
    for (let i = 0; i < 2; i++) assert.equal(await read(), 'version 1');
    const before = handled;
    for (let i = 0; i < 5; i++) assert.equal(await read(), 'version 1');
    assert.equal(handled, before, 'sent again without the handler');
    version = 2;
    assert.equal(await read(), 'version 2');
    assert.equal(handled, before + 1);
  });

  it('asks whether a kept answer holds when it is written: a change after the request arrived and before then is seen', async () => {
    for (let i = 0; i < 3; i++) await read();
    const made = version;
    const before = handled;
    assert.equal(await read(), `version ${made}`);
    assert.equal(handled, before, 'kept');
    // The change lands once the request has arrived and before the batch of answers is written
    // (both wait for the end of the turn in which the request arrived; this one was queued first).
    const arrived = () => setImmediate(() => (version = made + 1));
    server.prependOnceListener('request', arrived);
    assert.equal(await read(), `version ${made + 1}`, 'not the answer made before the change');
    assert.equal(handled, before + 1, 'answered in full');
  });

  it('answers in full when asking whether a kept answer holds fails, rather than leaving the request unanswered', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await fetch(failingUrl)).status, 200);
    const before = handled;
    failing.fails = true;
    const res = await fetch(failingUrl, { signal: AbortSignal.timeout(5000) });
    assert.equal(res.status, 200);
    assert.equal(await res.text(), `made ${before + 1}`, 'made anew');
  });

  it('answers requests that arrive while the same request is being answered with its answer, made once', async () => {
    const url = `${base.replace(/probe$/, 'slow')}?ms=50&k=${Date.now()}`;
    assert.equal(await (await fetch(url)).text(), `slow ${slowMade}`, 'asked once: not kept');
    const before = slowMade;
    const bodies = await Promise.all(Array.from({ length: 20 }, async () => (await fetch(url)).text()));
    assert.equal(slowMade, before + 1, 'made once for the twenty');
    assert.deepEqual(new Set(bodies), new Set([`slow ${before + 1}`]));
  });

  it('answers each in full after it when the answer being made is not one to keep, and waits only briefly for a slow one', async () => {
    const once = `${base.replace(/probe$/, 'slow')}?once&ms=20`;
    const before = slowMade;
    const bodies = await Promise.all(Array.from({ length: 3 }, async () => (await fetch(once)).text()));
    assert.equal(slowMade, before + 3, 'not reusable: each made its own');
    assert.equal(new Set(bodies).size, 3);
    // A slow answer (a render, a wiki that does not answer): the others do not wait it out.
    const slow = `${base.replace(/probe$/, 'slow')}?once&ms=600`;
    const from = slowStarts.length;
    await Promise.all(Array.from({ length: 3 }, async () => (await fetch(slow)).text()));
    const starts = slowStarts.slice(from);
    assert.equal(starts.length, 3);
    assert.ok(Math.max(...starts) - Math.min(...starts) < 500, `the others began while the first was still being made (${Math.round(Math.max(...starts) - Math.min(...starts))} ms apart)`);
  });

  it('counts every answer sent again in the request metrics, under its own method', async () => {
    const count = async (method: string) => {
      // Route labels hold braces (`/{domain}/...`): the line is matched whole.
      const m = new RegExp(`^http_requests_total\\{.*,method="${method}",status="200",.*\\} (\\d+)$`, 'gm');
      return [...(await metrics.registry.metrics()).matchAll(m)].reduce((n, x) => n + Number(x[1]), 0);
    };
    for (let i = 0; i < 2; i++) await read();
    const [gets, heads, made] = [await count('GET'), await count('HEAD'), handled];
    // GETs and HEADs in turn: each method's recorder is made again when the other was last.
    for (let i = 0; i < 3; i++) {
      assert.equal((await fetch(base)).status, 200);
      assert.equal((await fetch(base, { method: 'HEAD' })).status, 200);
      assert.equal((await fetch(base, { method: 'HEAD' })).status, 200);
    }
    assert.equal(handled, made, 'all sent again');
    assert.equal(await count('GET'), gets + 3);
    assert.equal(await count('HEAD'), heads + 6);
  });
});
