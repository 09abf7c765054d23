import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { HttpError } from '../../../src/util/errors.js';
import { requestMark, requestsWritten, upstreamFetch } from '../../../src/upstream/fetch.js';

/** A small fake of a misbehaving wiki, to check the upstream client's errors and retries. */
describe('upstream client', () => {
  let server: http.Server;
  let base: string;
  const hits = new Map<string, number>();
  let readingSince: number | undefined;
  before(async () => {
    server = http.createServer((req, res) => {
      const n = (hits.get(req.url!) ?? 0) + 1;
      hits.set(req.url!, n);
      if (req.url === '/flaky' && n < 3) return res.writeHead(503).end();
      if (req.url === '/broken') return res.writeHead(500).end();
      if (req.url === '/slow') return void setTimeout(() => res.end('late'), 500);
      if (req.url === '/ua') return res.end(req.headers['user-agent']);
      if (req.url === '/held') return void setTimeout(() => res.end('answered'), 300);
      if (req.url === '/read-late') {
        // Reads the request's body only after a while: until then its sender cannot finish writing it.
        req.pause();
        return void setTimeout(() => {
          readingSince = Date.now();
          req.resume();
          req.on('end', () => res.end('read'));
        }, 500);
      }
      if (req.url === '/gzip') {
        if (!/gzip/.test(req.headers['accept-encoding'] ?? '')) return res.end('asked without gzip');
        return res.writeHead(200, { 'content-encoding': 'gzip', 'retry-after': '7' }).end(gzipSync('compressed answer'));
      }
      if (req.url === '/big') return res.end(Buffer.alloc(4096, 'x'));
      if (req.url === '/bomb') return res.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync(Buffer.alloc(1 << 20)));
      if (req.url === '/trickle') {
        // Headers at once, then a byte now and then: the timeout covers the whole answer.
        res.writeHead(200);
        const drip = setInterval(() => res.write('.'), 20);
        return void res.on('close', () => clearInterval(drip));
      }
      if (req.url === '/truncated') {
        // Promises more than it sends, then hangs up: a partial answer must never pass for a whole one.
        res.writeHead(200, { 'content-length': '1000' });
        res.write('only part of it');
        return void setTimeout(() => res.destroy(), 20);
      }
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise((r) => server.close(r)));

  const status = (p: Promise<unknown>, code: number) => assert.rejects(p, (e: HttpError) => e instanceof HttpError && e.status === code);

  it('sends the configured User-Agent', async () => {
    assert.equal((await upstreamFetch(`${base}/ua`, 'wikistore-test/1 (contact)')).body.toString(), 'wikistore-test/1 (contact)');
  });

  it('asks for gzip and hands back the decoded answer, headers looked up in any case', async () => {
    const res = await upstreamFetch(`${base}/gzip`, 'ua');
    assert.equal(res.body.toString(), 'compressed answer');
    assert.equal(res.headers.get('Retry-After'), '7');
    assert.equal(res.headers.get('x-missing'), null);
  });

  it('treats an answer cut short as the wiki being unreachable, after retrying it', async () => {
    hits.delete('/truncated');
    await status(upstreamFetch(`${base}/truncated`, 'ua', { retries: 1 }), 503);
    assert.equal(hits.get('/truncated'), 2);
  });

  it('refuses an answer larger than it takes, sent so or decoded so, with a 502', async () => {
    await status(upstreamFetch(`${base}/big`, 'ua', { maxBytes: 1024 }), 502);
    await status(upstreamFetch(`${base}/bomb`, 'ua', { maxBytes: 64 * 1024 }), 502);
    assert.equal((await upstreamFetch(`${base}/big`, 'ua', { maxBytes: 8192 })).body.length, 4096);
  });

  it('times out an answer that trickles in, not only one whose headers are late', async () => {
    await status(upstreamFetch(`${base}/trickle`, 'ua', { timeoutMs: 200 }), 504);
  });

  it('retries 5xx answers and succeeds when the wiki recovers', async () => {
    const res = await upstreamFetch(`${base}/flaky`, 'ua', { retries: 2 });
    assert.equal(res.status, 200);
    assert.equal(hits.get('/flaky'), 3);
  });

  it('answers 502 when the wiki keeps failing, 504 when it is too slow, 503 when it is unreachable', async () => {
    await status(upstreamFetch(`${base}/broken`, 'ua', { retries: 1 }), 502);
    assert.equal(hits.get('/broken'), 2);
    await status(upstreamFetch(`${base}/slow`, 'ua', { timeoutMs: 100 }), 504);
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    await status(upstreamFetch(`http://127.0.0.1:${port}/`, 'ua', { retries: 0 }), 503);
  });

  it('tells when the requests begun since a mark are on the wire, without waiting for their answers', async () => {
    await requestsWritten(requestMark()); // nothing begun: at once
    let answered = false;
    const held = upstreamFetch(`${base}/held`, 'ua').then((res) => {
      answered = true;
      return res.body.toString();
    });
    await requestsWritten(0);
    assert.equal(answered, false, 'resolved before the answer (held 300 ms)');
    assert.equal(await held, 'answered');

    // A request larger than the sockets' buffers is written only as the wiki reads it.
    const beforeLarge = requestMark();
    const large = upstreamFetch(`${base}/read-late`, 'ua', { method: 'POST', body: 'x'.repeat(48 * 1024 * 1024), maxBytes: 1024 });
    // Requests begun later do not wait for it.
    const later = requestMark();
    const small = upstreamFetch(`${base}/ua`, 'ua');
    await requestsWritten(later);
    assert.equal(readingSince, undefined, 'a request begun before the mark is not waited for');
    await requestsWritten(beforeLarge);
    const writtenAt = Date.now();
    assert.ok(readingSince !== undefined && writtenAt >= readingSince, 'not before the wiki took the whole request');
    assert.equal((await large).body.toString(), 'read');
    await small;

    // A request that cannot be sent counts as done once it has failed.
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const mark = requestMark();
    const refused = upstreamFetch(`http://127.0.0.1:${port}/`, 'ua', { retries: 0 }).catch(() => 'refused');
    await requestsWritten(mark);
    assert.equal(await refused, 'refused');
  });
});

/**
 * A wiki (or a proxy before it) closing kept-alive connections it deems idle: a request sent on
 * one just then is reset before any answer. The closing is simulated by hanging up on a
 * connection's second request.
 */
describe('upstream client on connections the wiki closed', () => {
  let server: http.Server;
  let base: string;
  const seen: { url: string; body: string; nth: number }[] = [];
  before(async () => {
    const served = new WeakMap<object, number>();
    server = http.createServer((req, res) => {
      const nth = (served.get(req.socket) ?? 0) + 1;
      served.set(req.socket, nth);
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        seen.push({ url: req.url!, body, nth });
        if (req.url === '/hangup' || nth > 1) return void req.socket.destroy();
        res.end(`answered ${body}`);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise((r) => server.close(r)));

  it('sends a request again, once, on a new connection when its kept-alive one was closed, edits too', async () => {
    const edit = { method: 'POST', body: 'text=x', retries: 0 };
    assert.equal((await upstreamFetch(`${base}/edit`, 'ua', edit)).body.toString(), 'answered text=x');
    seen.length = 0;
    // The same connection again: hung up on, then the edit goes on a connection of its own.
    assert.equal((await upstreamFetch(`${base}/edit`, 'ua', edit)).body.toString(), 'answered text=x');
    assert.deepEqual(seen.map((s) => s.nth), [2, 1]);
  });

  it('does not send again a request hung up on over a new connection: that is the wiki failing', async () => {
    seen.length = 0;
    await assert.rejects(upstreamFetch(`${base}/hangup`, 'ua', { method: 'POST', body: 'text=y', retries: 0 }), (e: HttpError) => e instanceof HttpError && e.status === 503);
    // The first attempt may have gone on a kept connection (then one more on a new one): never more.
    assert.ok(seen.length >= 1 && seen.length <= 2, `sent ${seen.length} times`);
    assert.equal(seen.at(-1)!.nth, 1, 'the last attempt went on a new connection');
  });
});
