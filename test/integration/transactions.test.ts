import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { v1 as uuidv1 } from 'uuid';
import fs from 'node:fs';
import path from 'node:path';
import { ADMIN_TOKEN, admin, BACKENDS, freshDomain, request, sleep, processConfig, startProcess, startServer, tempDir, type TestServer } from '../helpers.js';
import { startFakeFarm } from '../fake-farm.js';
import { storeAbandoned, storeFinished } from '../transaction-load.js';

const TX_TYPE = 'application/json;profile="https://mediawiki.org/schema/transaction"';

for (const backend of BACKENDS) {
  describe(`HTTP transactions: ${backend.name}`, () => {
    let s: TestServer;
    let sys: string;
    before(async () => {
      s = await startServer({ storage: backend.storage(), transaction_sweep_interval: 0 });
      sys = `${s.base}/${s.domain}/sys`;
      await request(`${sys}/key_rev_value/tx`, { method: 'PUT', headers: admin });
    });
    after(() => s.close());

    const put = (tid: string, txn: unknown, headers: Record<string, string> = {}) =>
      request(`${sys}/transactions/${tid}`, { method: 'PUT', headers: { ...admin, 'content-type': TX_TYPE, ...headers }, body: JSON.stringify(txn) });
    const rev = (key: string, tid: string) => `/${s.domain}/sys/key_rev_value/tx/${key}/${tid}`;
    const revisions = async (key: string) => ((await request(`${sys}/key_rev_value/tx/${key}/`, { headers: admin })).json?.items ?? []) as string[];

    it('runs every dependent once the primary succeeded, and answers their outcomes', async () => {
      const tid = uuidv1();
      const txn = {
        method: 'PUT', uri: rev('primary', tid), headers: { 'content-type': 'text/plain' }, body: 'the primary',
        then: [
          { name: 'json', method: 'PUT', uri: rev('dep-json', tid), headers: { 'content-type': 'application/json' }, body: { a: [1, 2] } },
          { method: 'PUT', uri: rev('dep-binary', tid), headers: { 'content-type': 'application/octet-stream', 'content-transfer-encoding': 'base64' }, body: Buffer.from([0, 1, 254, 255]).toString('base64') },
          { method: 'DELETE', uri: `/${s.domain}/sys/key_value/nobucket/x` },
        ],
      };
      const res = await put(tid, txn);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.status, 201);
      assert.deepEqual(res.json.then.map((t: { status: number }) => t.status), [201, 201, 404]);
      // A named step's result carries its name, so a client reads it by name.
      assert.deepEqual(res.json.then.map((t: { name?: string }) => t.name), ['json', undefined, undefined]);
      // A dependent's small JSON answer is kept with its outcome (here the DELETE's problem, saying why).
      assert.equal(typeof res.json.then[2].body, 'object');
      assert.match(JSON.stringify(res.json.then[2].body), /nobucket|not found|unknown/i);
      assert.equal((await request(`${s.base}${rev('dep-json', tid)}`, { headers: admin })).text, '{"a":[1,2]}');
      assert.deepEqual((await request(`${s.base}${rev('dep-binary', tid)}`, { headers: admin })).raw, Buffer.from([0, 1, 254, 255]));
      const got = await request(`${sys}/transactions/${tid}`, { headers: admin });
      assert.equal(got.json.state, 'done');
      assert.deepEqual(got.json.result.then, res.json.then);
    });

    it('runs no dependent when the primary fails, and forgets the transaction', async () => {
      const tid = uuidv1();
      await request(`${s.base}${rev('taken', tid)}`, { method: 'PUT', headers: { ...admin, 'content-type': 'text/plain' }, body: 'first' });
      const res = await put(tid, { method: 'PUT', uri: rev('taken', tid), headers: { 'content-type': 'text/plain' }, body: 'second', then: [{ method: 'PUT', uri: rev('never', tid), headers: { 'content-type': 'text/plain' }, body: 'x' }] });
      assert.equal(res.status, 412);
      assert.deepEqual(await revisions('never'), []);
      assert.equal((await request(`${sys}/transactions/${tid}`, { headers: admin })).status, 404);
    });

    it('executes a tid put twice once; If-None-Match: * refuses the second', async () => {
      const tid = uuidv1();
      const txn = { method: 'PUT', uri: rev('twice', tid), headers: { 'content-type': 'text/plain' }, body: 'x', then: [{ method: 'PUT', uri: rev('twice-dep', tid), headers: { 'content-type': 'text/plain' }, body: 'y' }] };
      const first = await put(tid, txn);
      const second = await put(tid, txn);
      assert.equal(first.status, 200);
      assert.deepEqual(second.json, first.json);
      assert.equal((await put(tid, txn, { 'if-none-match': '*' })).status, 412);
      assert.deepEqual(await revisions('twice-dep'), [tid]);
    });

    it('saves a revisioned object property with its sibling properties as one transaction (POST)', async () => {
      await request(`${sys}/revisioned_object/objs`, { method: 'PUT', headers: admin });
      const prop = (name: string, p: string) => `/${s.domain}/sys/revisioned_object/objs/${name}/${p}`;
      const tid = uuidv1();
      const post = (body: unknown) => request(`${s.base}${prop('page1', 'html')}`, { method: 'POST', headers: { ...admin, 'content-type': TX_TYPE }, body: JSON.stringify(body) });
      const ok = await post({
        method: 'PUT', uri: `${prop('page1', 'html')}/${tid}`, headers: { 'content-type': 'text/html' }, body: '<p>hi</p>',
        then: [{ method: 'PUT', uri: `${prop('page1', 'data-mw')}/${tid}`, headers: { 'content-type': 'application/json' }, body: { ids: {} } }],
      });
      assert.equal(ok.status, 200, ok.text);
      assert.deepEqual((await request(`${s.base}${prop('page1', '')}`, { headers: admin })).json.items, ['data-mw', 'html']);
      assert.equal((await request(`${s.base}${prop('page1', 'data-mw')}/${tid}`, { headers: admin })).text, '{"ids":{}}');
      const other = await post({ method: 'PUT', uri: `${prop('page1', 'wikitext')}/${uuidv1()}`, headers: { 'content-type': 'text/plain' }, body: 'x' });
      assert.equal(other.status, 400);
      const stale = await post({
        method: 'PUT', uri: prop('page1', 'html'), headers: { 'content-type': 'text/html', 'if-match': `"${uuidv1()}"` }, body: '<p>lost race</p>',
        then: [{ method: 'PUT', uri: `${prop('page1', 'data-mw')}/${uuidv1()}`, headers: { 'content-type': 'application/json' }, body: { ids: { x: 1 } } }],
      });
      assert.equal(stale.status, 412);
      assert.deepEqual((await request(`${s.base}${prop('page1', 'data-mw')}/`, { headers: admin })).json.items, [tid], 'no sibling without its primary');
    });

    it('refuses non-idempotent dependents, other domains, and tids outside the lifetime; GET says 404 or 410', async () => {
      const tid = uuidv1();
      assert.equal((await put(tid, { method: 'PUT', uri: rev('a', tid), then: [{ method: 'POST', uri: rev('b', tid) }] })).status, 400);
      assert.equal((await put(tid, { method: 'PUT', uri: rev('a', tid), then: [{ name: 'Not a name!', method: 'PUT', uri: rev('b', tid) }] })).status, 400);
      assert.equal((await put(tid, { method: 'PUT', uri: '/other.example/sys/key_value/x/y' })).status, 400);
      const old = uuidv1({ msecs: Date.now() - 2 * 86400_000, nsecs: 0 });
      assert.equal((await put(old, { method: 'PUT', uri: rev('a', old) })).status, 400);
      assert.equal((await request(`${sys}/transactions/${old}`, { headers: admin })).status, 410);
      assert.equal((await request(`${sys}/transactions/${uuidv1()}`, { headers: admin })).status, 404);
      assert.equal((await request(`${sys}/transactions/${tid}`)).status, 403, 'internal API');
    });

    it('refuses a transaction inside a transaction however its path is encoded', async () => {
      for (const path of ['sys/transactions', 'sys/%74ransactions', '%73ys/transactions', 'sys//transactions', 'sys/Transactions']) {
        const tid = uuidv1();
        const inner = { method: 'PUT', uri: `/${s.domain}/${path}/${uuidv1()}`, headers: { 'content-type': TX_TYPE }, body: { method: 'PUT', uri: rev('nested', tid) } };
        const asPrimary = await put(tid, inner);
        assert.equal(asPrimary.status, 400, `${path} as the primary`);
        assert.equal(asPrimary.json.type, 'urn:problem:invalid-transaction');
        const asDependent = await put(uuidv1(), { method: 'PUT', uri: rev('outer', tid), headers: { 'content-type': 'text/plain' }, body: 'x', then: [inner] });
        assert.equal(asDependent.status, 400, `${path} as a dependent`);
      }
    });
  });
}

for (const backend of BACKENDS) {
  describe(`the transaction sweep reads what is unfinished, not what is stored: ${backend.name}`, () => {
    let s: TestServer;
    before(async () => {
      s = await startServer({ storage: backend.storage(), transaction_sweep_interval: 0.2 });
      await request(`${s.base}/${s.domain}/sys/key_rev_value/swept`, { method: 'PUT', headers: admin });
    });
    after(() => s.close());
    const metric = async (pattern: RegExp) => Number(pattern.exec((await request(`${s.base}/metrics`)).text)?.[1] ?? 0);
    const transactionReads = () => metric(/^storage_operation_seconds_count\{operation="get",table="transactions"\} (\d+)/m);
    const state = async (tid: string) => (await request(`${s.base}/${s.domain}/sys/transactions/${tid}`, { headers: admin })).json;
    // Read from storage, not GET: a GET of an unfinished transaction would take it over itself.
    let polls = 0;
    const stored = async (tid: string) => {
      polls++;
      return (await s.app.storage.get(s.domain, { table: 'transactions', attributes: { tid } })).items[0]?.state;
    };

    it("finishes a dead process's transactions reading one row each, with 3,000 finished ones stored beside them", async () => {
      await storeFinished(s.app.storage, s.domain, 3000);
      const uri = (i: number) => `/${s.domain}/sys/key_rev_value/swept/k${i}`;
      const abandoned = Array.from({ length: 5 }, (_, i) => ({
        method: 'PUT', uri: uri(i), headers: { 'content-type': 'text/plain' }, body: `abandoned ${i}`,
        then: [{ method: 'PUT', uri: `${uri(i)}-dep`, headers: { 'content-type': 'text/plain' }, body: 'dependent' }],
      }));
      // Sweeps with nothing unfinished read the pending index only: not one row of the 3,000.
      await sleep(400);
      const idle = await transactionReads();
      const sweeps = await metric(/^transactions_sweeps_total\{domain="[^"]+",outcome="done"\} (\d+)/m);
      await sleep(1000);
      assert.ok((await metric(/^transactions_sweeps_total\{domain="[^"]+",outcome="done"\} (\d+)/m)) >= sweeps + 3, 'sweeps ran');
      assert.equal((await transactionReads()) - idle, 0, 'reads of the transactions table by idle sweeps');
      const readsBefore = await transactionReads();
      const tids = await storeAbandoned(s.app.storage, s.domain, abandoned);
      // An entry whose transaction was never stored (its process died between the two writes).
      await s.app.storage.put(s.domain, { table: 'transactions_pending', attributes: { bucket: Math.floor((Date.now() - 120_000) / 60_000), tid: uuidv1(), owner: 'dead', stored: Date.now() - 120_000 } });
      const deadline = Date.now() + 10_000;
      for (const tid of tids) {
        while ((await stored(tid)) !== 'done' && Date.now() < deadline) await sleep(100);
      }
      const sweepReads = (await transactionReads()) - readsBefore - polls;
      const results = await Promise.all(tids.map(state));
      assert.deepEqual(results.map((r) => r.state), tids.map(() => 'done'));
      // The primary's real answer, recorded as a run that did not crash would have.
      assert.deepEqual(results.map((r) => r.result.status), tids.map(() => 201));
      assert.ok(results.every((r) => typeof r.result.headers.etag === 'string'), 'the ETag of the version it made');
      // Two reads per recovered transaction (the sweep's and the takeover's), none per finished one.
      assert.ok(sweepReads <= 2 * tids.length + 2, `${sweepReads} reads of the transactions table by the sweep`);
      // The orphan may sit in an older bucket that a sweep had read just before it was written: the
      // next sweep removes it.
      const pendingLeft = async () => (await s.app.storage.get(s.domain, { table: 'transactions_pending', limit: 100 })).items;
      let left = await pendingLeft();
      while (left.length > 0 && Date.now() < deadline + 2000) {
        await sleep(100);
        left = await pendingLeft();
      }
      assert.deepEqual(left, [], 'the pending index is empty: finished entries and the orphan removed');
      // The metrics of a sweep begun after they were finished.
      const done = await metric(/^transactions_sweeps_total\{domain="[^"]+",outcome="done"\} (\d+)/m);
      while ((await metric(/^transactions_sweeps_total\{domain="[^"]+",outcome="done"\} (\d+)/m)) < done + 2) await sleep(100);
      assert.equal(await metric(/^transactions_sweeps_total\{domain="[^"]+",outcome="failed"\} (\d+)/m), 0);
      assert.equal(await metric(/^transactions_oldest_unfinished_seconds\{domain="[^"]+"\} (\S+)/m), 0);
    });

    it("counts a live process's unfinished transaction as the oldest, and leaves it to its owner", async () => {
      await s.app.storage.put(s.domain, { table: 'heartbeats', attributes: { owner: 'alive-elsewhere', seen: Date.now(), _ttl: 60 } });
      const at = Date.now() - 40_000;
      const tid = uuidv1({ msecs: at });
      const bucket = Math.floor(at / 60_000);
      const request_ = { method: 'PUT', uri: `/${s.domain}/sys/key_rev_value/swept/live`, headers: { 'content-type': 'text/plain' }, body: 'x' };
      await s.app.storage.put(s.domain, { table: 'transactions_pending', attributes: { bucket, tid, owner: 'alive-elsewhere', stored: at, _ttl: 60 } });
      await s.app.storage.put(s.domain, { table: 'transactions', attributes: { tid, owner: 'alive-elsewhere', state: 'pending', request: request_, created: at, bucket, _ttl: 60 } });
      await sleep(800);
      const oldest = await metric(/^transactions_oldest_unfinished_seconds\{domain="[^"]+"\} (\S+)/m);
      assert.ok(oldest >= 40 && oldest < 60, `oldest unfinished: ${oldest} s`);
      assert.equal((await state(tid)).state, 'pending');
    });
  });
}

// On the embedded engine and on a server one (whose transactions the killed process leaves open on its connections).
for (const backend of BACKENDS.filter((b) => b.name === 'sqlite' || b.name === 'mariadb')) describe(`HTTP transactions survive kill -9 (two real processes on one storage, ${backend.name})`, () => {
  const dir = tempDir();
  const domain = freshDomain();
  const storage = backend.name === 'sqlite' ? undefined : backend.storage();
  const config = (kill?: string) => processConfig(dir, domain, 'http://127.0.0.1:1', (kill ? `fault_injection:\n  transaction_kill: ${kill}\n` : ''), storage);
  let survivor: { child: ChildProcess; port: Promise<number> };
  let base: string;
  before(async () => {
    survivor = startProcess(config());
    base = `http://127.0.0.1:${await survivor.port}/${domain}/sys`;
    await request(`${base}/key_rev_value/crash`, { method: 'PUT', headers: admin });
  });
  after(() => {
    survivor.child.kill('SIGTERM');
  });

  /** One transaction whose process dies at `kill`: the survivor's record of it, once finished. */
  async function crashRound(kill: string, round: string): Promise<{ status: number; headers: Record<string, string> }> {
    const victim = startProcess(config(kill));
    const port = await victim.port;
    const tid = uuidv1();
    const uri = (key: string) => `/${domain}/sys/key_rev_value/crash/${key}-${round}/${tid}`;
    const txn = {
      method: 'PUT', uri: uri('primary'), headers: { 'content-type': 'text/plain' }, body: `primary ${round}`,
      then: [0, 1, 2].map((j) => ({ method: 'PUT', uri: uri(`dep${j}`), headers: { 'content-type': 'text/plain' }, body: `dep ${j} of ${round}` })),
    };
    const answer = await request(`http://127.0.0.1:${port}/${domain}/sys/transactions/${tid}`, {
      method: 'PUT', headers: { ...admin, 'content-type': TX_TYPE }, body: JSON.stringify(txn),
    }).catch(() => undefined);
    assert.equal(answer, undefined, 'the victim died before answering');
    // The survivor notices the dead heartbeat (1 s lease) and finishes it in a sweep.
    const deadline = Date.now() + 10_000;
    let record: { state?: string; result?: { status: number; headers: Record<string, string> } } | undefined;
    while (Date.now() < deadline) {
      record = (await request(`${base}/transactions/${tid}`, { headers: admin })).json;
      if (record?.state === 'done') break;
      await sleep(200);
    }
    assert.equal(record?.state, 'done', `round ${round}: the transaction was finished`);
    for (const key of ['primary', 'dep0', 'dep1', 'dep2']) {
      const listed = (await request(`${base}/key_rev_value/crash/${key}-${round}/`, { headers: admin })).json.items;
      assert.deepEqual(listed, [tid], `round ${round}: ${key} applied exactly once`);
    }
    assert.equal(typeof record!.result!.headers.etag, 'string', `round ${round}: the primary's headers are recorded`);
    return record!.result!;
  }

  it('finishes, in the other process, every transaction whose process died at a random point: none lost, none doubled', async () => {
    const started = Date.now();
    for (let round = 0; round < 20; round++) {
      const { status } = await crashRound('random', `r${round}`);
      // 201 as the primary answered; 200 (its entity read back) only if it died between the primary and recording its answer.
      assert.ok(status === 201 || status === 200, `round ${round}: ${status}`);
    }
    assert.ok(Date.now() - started < 120_000);
  });

  it("records the primary's own answer when its process died after it", async () => {
    for (let round = 0; round < 2; round++) assert.equal((await crashRound('after-primary', `p${round}`)).status, 201);
  });
});

describe("a farm's wiki's transaction whose process died is finished by another that never ran one of that wiki", () => {
  it('finds it through the storage group\'s list of wikis with transactions, and finishes it once', async () => {
    const farm = await startFakeFarm(['w1']);
    const dir = tempDir();
    const config = (kill?: string) => {
      const file = path.join(dir, `farm-${kill ?? 'survivor'}.yaml`);
      fs.writeFileSync(file, [
        `storage: ${JSON.stringify({ backend: 'sqlite', path: path.join(dir, 'shared.sqlite3') })}`,
        'wikis:',
        '  "*.crashfarm.test":',
        `    action_api: "${farm.url}/{label}/api.php"`,
        `    rest_api: "${farm.url}/{label}/rest.php"`,
        `admin_token: ${ADMIN_TOKEN}`, 'log_level: info', 'transaction_lease: 1', 'transaction_sweep_interval: 0.3', 'follow_changes: false',
        ...(kill ? ['fault_injection:', `  transaction_kill: ${kill}`] : []),
      ].join('\n'));
      return { CONFIG: file, PORT: '0', WORKERS: '0' };
    };
    const survivor = startProcess(config());
    try {
      const base = `http://127.0.0.1:${await survivor.port}/w1.crashfarm.test/sys`;
      assert.equal((await request(`${base}/key_rev_value/crash`, { method: 'PUT', headers: admin })).status, 201);
      const victim = startProcess(config('after-primary'));
      const tid = uuidv1();
      const uri = (key: string) => `/w1.crashfarm.test/sys/key_rev_value/crash/${key}/${tid}`;
      const txn = { method: 'PUT', uri: uri('primary'), headers: { 'content-type': 'text/plain' }, body: 'primary', then: [{ method: 'PUT', uri: uri('dep'), headers: { 'content-type': 'text/plain' }, body: 'dep' }] };
      const answer = await request(`http://127.0.0.1:${await victim.port}/w1.crashfarm.test/sys/transactions/${tid}`, {
        method: 'PUT', headers: { ...admin, 'content-type': TX_TYPE }, body: JSON.stringify(txn),
      }).catch(() => undefined);
      assert.equal(answer, undefined, 'the victim died before answering');
      // Watched through the dependent's key alone: asking for the transaction itself would start it.
      let applied: unknown[] = [];
      for (const deadline = Date.now() + 15_000; Date.now() < deadline && applied.length === 0; await sleep(200)) {
        applied = (await request(`${base}/key_rev_value/crash/dep/`, { headers: admin })).json?.items ?? [];
      }
      assert.deepEqual(applied, [tid], "finished by the survivor's sweep");
      assert.equal((await request(`${base}/transactions/${tid}`, { headers: admin })).json.state, 'done');
      for (const key of ['primary', 'dep']) assert.deepEqual((await request(`${base}/key_rev_value/crash/${key}/`, { headers: admin })).json.items, [tid], `${key} applied once`);
    } finally {
      survivor.child.kill('SIGTERM');
      await farm.close();
    }
  });
});
