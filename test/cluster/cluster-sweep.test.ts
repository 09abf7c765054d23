import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openStorage } from '../../src/storage/index.js';
import { admin, request, sleep, startServer } from '../helpers.js';
import { storeAbandoned, storeFinished } from '../transaction-load.js';
import { CLUSTER_ONLY, clusterConfig } from './cluster.js';

/**
 * The transaction sweep at scale on three nodes: run after the cluster's other suites, before a
 * node is killed.
 */
describe('Cassandra cluster: the transaction sweep at scale', CLUSTER_ONLY, () => {
  it("finishes a dead process's transactions within 30 s of a new process's start, reading one row each, past 100,000 finished ones", async () => {
    const finished = Number(process.env.WIKISTORE_SWEEP_SCALE ?? 100_000);
    // Every finished transaction leaves its pending entry's tombstone, which a sweep reads past;
    // a tenth keep their row too, which no sweep may read (counted below): a sweep that read the
    // table would read thousands of rows, and writing all 100,000 would double the fill's time.
    const rows = Math.ceil(finished / 10);
    const first = await startServer({ storage: clusterConfig(), transaction_sweep_interval: 0 });
    const { domain } = first;
    const wikis = first.app.config.wikis;
    try {
      await request(`${first.base}/${domain}/sys/key_rev_value/swept`, { method: 'PUT', headers: admin });
      const filling = Date.now();
      // Loaded as a bulk load is, written to every replica but acknowledged by one: what is
      // tested is the sweep beside them, not how they were written (at QUORUM, half as fast).
      const filler = await openStorage(clusterConfig(undefined, { write: 'one' }));
      try {
        await storeFinished(filler, domain, finished, { concurrency: 256, rows });
      } finally {
        await filler.close();
      }
      console.log(`# ${finished} finished transactions' pending tombstones (${rows} of their rows) stored in ${((Date.now() - filling) / 1000).toFixed(1)} s`);
      const uri = (i: number) => `/${domain}/sys/key_rev_value/swept/k${i}`;
      const requests = Array.from({ length: 20 }, (_, i) => ({
        method: 'PUT', uri: uri(i), headers: { 'content-type': 'text/plain' }, body: `abandoned ${i}`,
        then: [{ method: 'PUT', uri: `${uri(i)}-dep`, headers: { 'content-type': 'text/plain' }, body: 'dependent' }],
      }));
      const tids = await storeAbandoned(first.app.storage, domain, requests);
      await first.close();
      // A new process (nothing learnt by an earlier sweep) takes them over.
      const started = Date.now();
      const second = await startServer({ storage: clusterConfig(), wikis, transaction_sweep_interval: 5 });
      const transactionReads = async () =>
        Number(/^storage_operation_seconds_count\{operation="get",table="transactions"\} (\d+)/m.exec((await request(`${second.base}/metrics`)).text)?.[1] ?? 0);
      let polls = 0;
      try {
        const unfinished = new Set(tids);
        while (unfinished.size > 0 && Date.now() - started < 60_000) {
          // Read from storage, not GET: a GET of an unfinished transaction would take it over itself.
          for (const tid of unfinished) {
            polls++;
            const [row] = (await second.app.storage.get(domain, { table: 'transactions', attributes: { tid } })).items;
            if (row?.state === 'done') unfinished.delete(tid);
          }
          await sleep(250);
        }
        const took = (Date.now() - started) / 1000;
        console.log(`# ${tids.length} abandoned transactions finished ${took.toFixed(1)} s after a new process started (past ${finished} finished ones)`);
        assert.equal(unfinished.size, 0, 'every abandoned transaction was finished');
        assert.ok(took < 30, `finished within 30 s (${took.toFixed(1)} s)`);
        // Two reads per abandoned transaction (the sweep's and the takeover's), none per finished one.
        const sweepReads = (await transactionReads()) - polls;
        assert.ok(sweepReads <= 2 * tids.length + 2, `${sweepReads} reads of the transactions table by the sweep`);
      } finally {
        await second.close();
      }
    } finally {
      await first.close().catch(() => undefined);
    }
  });

});
