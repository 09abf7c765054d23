import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { openStorage, type TableStorage } from '../../src/storage/index.js';
import { cassandraConfig, freshDomain } from '../helpers.js';
import { rejectsWith, storageConformance } from './conformance.js';

storageConformance('cassandra', cassandraConfig);

describe('cassandra: what only this engine bounds', () => {
  let storage: TableStorage;
  before(async () => {
    storage = await openStorage(cassandraConfig());
  });
  after(() => storage.close());

  it('answers a write larger than one mutation may be with 400, not 500', async () => {
    const domain = freshDomain();
    await storage.createTable(domain, 'big', { table: 'big', attributes: { k: 'string', v: 'blob' }, index: [{ attribute: 'k', type: 'hash' }] });
    // A mutation may be half a commit log segment (16 MiB by default).
    await rejectsWith(storage.put(domain, { table: 'big', attributes: { k: 'x', v: crypto.randomBytes(17 * 1024 * 1024) } }), 400, /larger than the storage accepts/);
  });
});
