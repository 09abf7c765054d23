import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { CachePurger } from '../../../src/upstream/cache-purger.js';
import { sleep } from '../../helpers.js';

describe('purging the HTTP caches in front', () => {
  const received: string[] = [];
  let status = 200;
  let host: string;
  const cache = http.createServer((req, res) => {
    received.push(`${req.method} ${req.url}`);
    res.writeHead(status).end();
  });
  before(async () => {
    await new Promise<void>((r) => cache.listen(0, '127.0.0.1', r));
    host = `127.0.0.1:${(cache.address() as AddressInfo).port}`;
  });
  after(() => cache.close());

  it('sends PURGE for each path, and again once other processes\' page state may have caught up', async () => {
    received.length = 0;
    const counted: Record<string, number> = {};
    // The repeat comes a second later: long enough that a busy machine answers the first purge before it.
    const purger = new CachePurger([host], pino({ level: 'silent' }), (outcome, n) => (counted[outcome] = (counted[outcome] ?? 0) + n), 1000);
    const sent = Date.now();
    await purger.purge(['/d/v1/page/A/html', '/d/v1/page/']);
    assert.deepEqual(received.sort(), ['PURGE /d/v1/page/', 'PURGE /d/v1/page/A/html']);
    // Sent when the cache has them; counted once their answers are in.
    while ((received.length < 4 || counted.purged !== 4) && Date.now() - sent < 5000) await sleep(20);
    assert.ok(Date.now() - sent >= 1000, 'not before its time');
    assert.equal(received.length, 4, 'repeated');
    assert.equal(counted.purged, 4);
    purger.close();
  });

  it('rejects with 503 when a cache cannot be told, and counts the failures', async () => {
    status = 500;
    const counted: Record<string, number> = {};
    const purger = new CachePurger([host], pino({ level: 'silent' }), (outcome, n) => (counted[outcome] = (counted[outcome] ?? 0) + n));
    await assert.rejects(purger.purge(['/d/v1/page/B/html']), (e: { status?: number }) => e.status === 503);
    assert.equal(counted.failed, 1);
    status = 200;
  });

  it('drops repeats not sent yet when closed', async () => {
    received.length = 0;
    const purger = new CachePurger([host], pino({ level: 'silent' }), () => {}, 100);
    await purger.purge(['/d/v1/page/C/html']);
    purger.close();
    await sleep(200);
    assert.equal(received.length, 1);
  });
});
