import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { RenderLeases } from '../../src/modules/page/tables/render-leases.js';
import type { Request, RequestContext } from '../../src/router/types.js';
import { admin, freshDomain, parsoidRequests, processConfig, request, sleep, startProcess, tempDir } from '../helpers.js';
import { etagOf, waitFor, WIKI_URL } from '../wiki.js';

describe('renders across processes sharing the storage (workers, or several machines)', () => {
  const domain = freshDomain();
  const dir = tempDir();
  const children: ChildProcess[] = [];
  const bases: string[] = [];

  before(async () => {
    for (let i = 0; i < 2; i++) {
      const p = startProcess(processConfig(dir, domain, WIKI_URL));
      children.push(p.child);
      bases.push(`http://127.0.0.1:${await p.port}`);
    }
  });
  after(() => {
    for (const c of children) c.kill('SIGTERM');
  });

  it('makes one Parsoid request for a revision both miss at once, and both serve that one render', async () => {
    const title = 'Bodmin';
    const before = (await parsoidRequests(bases[0]!, domain)) + (await parsoidRequests(bases[1]!, domain));
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => request(`${bases[i % 2]}/${domain}/v1/page/${title}/html`)));
    for (const a of answers) assert.equal(a.status, 200, a.text.slice(0, 300));
    assert.equal(new Set(answers.map((a) => a.headers.etag)).size, 1, 'every answer is the same render');
    const after = (await parsoidRequests(bases[0]!, domain)) + (await parsoidRequests(bases[1]!, domain));
    assert.equal(after - before, 1, 'one Parsoid request between the two processes');
    const stored = await request(`${bases[0]}/${domain}/sys/table/parsoid/_query`, {
      method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: JSON.stringify({ attributes: { title }, proj: ['tid'] }),
    });
    assert.equal(stored.status, 200, stored.text);
    assert.equal(stored.json.items.length, 1, 'one render stored');
  });

  it('renders anew for an authorised no-cache that waited on another process\'s render of the revision, rather than serve that one', async () => {
    // The render another process is making may have begun before what the no-cache is for (a
    // template edited since): the forced render waits its turn, then asks Parsoid itself.
    const title = 'Toronto';
    const first = await request(`${bases[0]}/${domain}/v1/page/${title}/html`);
    assert.equal(first.status, 200);
    const { rev } = etagOf(first);
    // Stored once its lease is given back: until then a forced render would wait on this process's own.
    const latestTid = async () => (await request(`${bases[0]}/${domain}/sys/table/page_revisions/_query`, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: JSON.stringify({ attributes: { title }, limit: 1 }) })).json.items[0]?.latest_tid as string | undefined;
    await waitFor('the first render stored', 10_000, async () => ((await latestTid()) ? true : undefined));
    const leases = `${bases[0]}/${domain}/sys/table/page_render_leases/`;
    const hold = (holder: string | null) => request(leases, { method: 'PUT', headers: { ...admin, 'content-type': 'application/json' }, body: JSON.stringify({ attributes: { key: String(rev), holder, _ttl: 30 } }) });
    assert.equal((await hold('another-process')).status, 201);
    const before = await parsoidRequests(bases[0]!, domain);
    const forced = request(`${bases[0]}/${domain}/v1/page/${title}/html`, { headers: { ...admin, 'cache-control': 'no-cache' } });
    await sleep(400);
    assert.equal(await parsoidRequests(bases[0]!, domain), before, 'it waits while the lease is held');
    assert.equal((await hold(null)).status, 201);
    const answer = await forced;
    assert.equal(answer.status, 200, answer.text.slice(0, 300));
    assert.equal((await parsoidRequests(bases[0]!, domain)) - before, 1, 'the forced render asked Parsoid itself');
    assert.equal(etagOf(answer).tid, etagOf(first).tid, 'the same content keeps its tid');
  });
});

describe('a render lease', () => {
  /** Internal requests answered by hand: every lease write succeeds; `writes` records them. */
  const context = (writes: Request[]): RequestContext => ({
    requestId: 't', depth: 0, admin: true, external: false, client: () => undefined, log: pino({ level: 'silent' }),
    request: async (req) => {
      writes.push(req);
      return { status: 201, body: {} };
    },
  });

  it('is given back when storing the render fails, and that failure is left to the render\'s owner', async () => {
    const writes: Request[] = [];
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const storing = Promise.reject(new Error('disk full'));
      storing.catch(() => {}); // the owner's handler, as the page service's
      const made = await new RenderLeases('wiki.test', pino({ level: 'silent' })).once(context(writes), '42', async () => ({ stored: storing }), async () => undefined);
      assert.equal(made.stored, storing);
      await sleep(20);
      assert.deepEqual(unhandled, [], 'no rejection escapes the lease');
      const holders = writes.map((w) => (w.body as { attributes: { holder: string | null } }).attributes.holder);
      assert.equal(holders.length, 2, 'taken, then given back');
      assert.equal(typeof holders[0], 'string');
      assert.equal(holders[1], null);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
