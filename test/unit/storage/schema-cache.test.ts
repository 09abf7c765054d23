import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StorageError } from '../../../src/storage/errors.js';
import { SchemaCache } from '../../../src/storage/schema-cache.js';
import { sleep } from '../../helpers.js';

describe('schema cache: definitions changed by other processes', () => {
  it('asks for the epoch at most once per recheck interval where the engine cannot tell commits, and reloads when it moved', async () => {
    let epoch = 1;
    let epochReads = 0;
    let loads = 0;
    const cache = new SchemaCache<string>({ readEpoch: async () => (epochReads++, String(epoch)), recheckMs: 100 });
    const load = async () => `definition ${++loads}`;
    assert.equal(await cache.get('t', load), 'definition 1');
    for (let i = 0; i < 20; i++) assert.equal(await cache.get('t', load), 'definition 1');
    assert.equal(epochReads, 1);
    epoch = 2;
    await sleep(120);
    assert.equal(await cache.get('t', load), 'definition 2');
    assert.equal(epochReads, 2);
  });

  it('asks for the epoch only after a commit where the engine tells (its data version), and then at once', async () => {
    let version = 7;
    let epoch = 1;
    let epochReads = 0;
    const cache = new SchemaCache<number>({ readEpoch: async () => (epochReads++, String(epoch)), dataVersion: () => version });
    let loads = 0;
    const load = async () => ++loads;
    await cache.get('t', load);
    await cache.get('t', load);
    assert.equal(epochReads, 1);
    version = 8;
    assert.equal(await cache.get('t', load), 1, 'a commit that changed no definition keeps them');
    epoch = 2;
    version = 9;
    assert.equal(await cache.get('t', load), 2);
  });

  it('does not keep a definition loaded before its cache was emptied', async () => {
    const cache = new SchemaCache<string>({ readEpoch: async () => '1' });
    let release!: () => void;
    const slowLoad = cache.get('t', () => new Promise<string>((resolve) => (release = () => resolve('old'))));
    await sleep(10);
    cache.invalidate();
    release();
    assert.equal(await slowLoad, 'old');
    assert.equal(await cache.get('t', async () => 'new'), 'new');
  });

  it('runs a write again when the epoch read inside its transaction is not the one its definitions were loaded under', async () => {
    let epoch = '1';
    const cache = new SchemaCache<string>({ readEpoch: async () => epoch, dataVersion: () => 0 });
    let loads = 0;
    const write = () =>
      cache.retryStale(async () => {
        const definition = await cache.get('t', async () => `definition ${++loads}`, { confirmedLater: true });
        cache.confirm(epoch);
        return definition;
      }, () => false);
    // Never seen before: confirmed only once loaded under the epoch the transaction reads.
    assert.equal(await write(), 'definition 2');
    assert.equal(await write(), 'definition 2');
    epoch = '2';
    assert.equal(await write(), 'definition 3');
    assert.equal(loads, 3);
    // Moving again under the second attempt too: a 503 to retry, never a write on old definitions.
    let moves = 2;
    await assert.rejects(
      cache.retryStale(async () => {
        await cache.get('t', async () => 'x', { confirmedLater: true });
        cache.confirm(String(++moves));
      }, () => false),
      (err: unknown) => err instanceof StorageError && err.kind === 'unavailable' && err.code === 'definitions-changed',
    );
  });

  it('waits out definitions that move several times in a row (tables created one after another at start-up)', async () => {
    const cache = new SchemaCache<string>({ readEpoch: async () => '0', dataVersion: () => 0 });
    let moves = 0;
    let attempts = 0;
    const result = await cache.retryStale(async () => {
      attempts++;
      await cache.get('t', async () => 'definition', { confirmedLater: true });
      // The epoch moves under the first four attempts, then stays.
      cache.confirm(String(Math.min(++moves, 4)));
      return 'written';
    }, () => false);
    assert.equal(result, 'written');
    assert.equal(attempts, 5);
  });

  it('retries an operation once when the engine says its table or column is gone, with definitions reloaded', async () => {
    const cache = new SchemaCache<string>({ readEpoch: async () => '1' });
    await cache.get('t', async () => 'stale');
    let attempts = 0;
    const result = await cache.retryStale(async () => {
      attempts++;
      const definition = await cache.get('t', async () => 'current');
      if (definition === 'stale') throw new Error('no such column: x');
      return definition;
    }, (err) => /no such/.test(String(err)));
    assert.deepEqual([result, attempts], ['current', 2]);
    await assert.rejects(cache.retryStale(async () => { throw new Error('no such table'); }, () => true), /no such table/);
  });
});
