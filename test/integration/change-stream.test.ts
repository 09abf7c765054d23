import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { BACKENDS, request } from '../helpers.js';
import { listen, type Sse } from '../sse.js';
import { ChangeLog } from '../../src/modules/page/tables/change-log.js';
import { compareTids } from '../../src/util/tid.js';
import { startAgainstWiki, waitFor, type AgainstWiki } from '../wiki.js';

const RUN = Date.now().toString(36);
const SECRET = `stream-notice-secret-${RUN}-0123456789`;

/**
 * The change stream (`GET /{domain}/v1/changes`, Server-Sent Events) against the real wiki: what
 * the service learns of (here from the wiki's notices, as the WikistoreNotify extension sends
 * them) arrives in order, once, and a client resuming with Last-Event-ID misses nothing.
 */
for (const backend of BACKENDS) describe(`the change stream (${backend.name})`, () => {
  let a: AgainstWiki;
  let stream: string;
  const notify = (events: Record<string, unknown>[]) =>
    request(`${a.s.base}/wiki.test/v1/changes`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${SECRET}` }, body: events });
  const edited = async (title: string, text: string) => {
    const rev = await a.wiki.edit(title, text);
    const key = title.replace(/ /g, '_');
    const res = await notify([{ page_change_kind: 'edit', page: { page_title: key, namespace_id: 0 }, revision: { rev_id: rev } }]);
    assert.equal(res.status, 200, res.text);
    // Stored (and so recorded) before the next edit: two quick edits may be stored as one change.
    await waitFor(`revision ${rev} stored`, 15_000, async () => {
      const html = await request(`${a.s.base}/wiki.test/v1/page/${encodeURIComponent(key)}/html`);
      return String(html.headers.etag).startsWith(`"${rev}/`) ? true : undefined;
    });
    return rev;
  };
  const eventsOf = (events: Sse[], title: string) => events.filter((e) => e.data.title === title || e.data.to === title);

  before(async () => {
    // A client that takes nothing is cut after a second here (30 s by default).
    a = await startAgainstWiki({ storage: backend.storage(), change_stream_stall_timeout: 1 }, { notice_secret: SECRET });
    stream = `${a.s.base}/wiki.test/v1/changes`;
  });
  after(() => a.close());

  it('delivers each change once, in order: edits with their revision and render, a move, a deletion', async () => {
    const client = listen(stream);
    const head = await client.status;
    assert.equal(head.status, 200);
    assert.match(String(head.headers['content-type']), /^text\/event-stream/);
    assert.equal(head.headers['cache-control'], 'no-store');
    const title = `Stream page ${RUN} ${backend.name}`;
    const key = title.replace(/ /g, '_');
    // Stored first (a read), so the service follows it.
    const first = await a.wiki.edit(title, 'Version one.');
    assert.equal((await request(`${a.s.base}/wiki.test/v1/page/${encodeURIComponent(key)}/html`)).status, 200);
    const second = await edited(title, 'Version two.');
    const third = await edited(title, 'Version three.');
    await a.wiki.move(title, `${title} moved`, { noredirect: true });
    await notify([{ page_change_kind: 'move', page: { page_title: `${key}_moved`, namespace_id: 0 }, prior_state: { page: { page_title: key, namespace_id: 0 } } }]);
    const got = await waitFor('the edits and the move streamed', 15_000, async () => {
      const mine = eventsOf(client.events, key);
      return mine.some((e) => e.event === 'move') && mine.filter((e) => e.event === 'edit').length >= 3 ? mine : undefined;
    });
    const edits = got.filter((e) => e.event === 'edit');
    assert.deepEqual(edits.map((e) => e.data.rev), [first, second, third], 'each revision once, in order');
    assert.ok(edits.every((e) => /^[0-9a-f-]{36}$/.test(e.data.tid)), 'with the render made of it');
    const move = got.find((e) => e.event === 'move')!;
    assert.equal(move.data.to, `${key}_moved`);
    await a.wiki.delete(`${title} moved`);
    await notify([{ page_change_kind: 'delete', page: { page_title: `${key}_moved`, namespace_id: 0 } }]);
    const deleted = await waitFor('the deletion streamed', 15_000, async () => client.events.find((e) => e.event === 'delete' && e.data.title === `${key}_moved`));
    assert.ok(compareTids(deleted.id, move.id) > 0);
    const ids = client.events.map((e) => e.id);
    // In time order (a time-uuid's text does not sort by time: its low bits come first).
    assert.deepEqual([...ids].sort(compareTids), ids, 'ids in order');
    assert.equal(new Set(ids).size, ids.length, 'no event twice');
    client.close();
  });

  it('resumes after Last-Event-ID with every event missed meanwhile, none twice; filters and include=html', async () => {
    const title = `Resume page ${RUN} ${backend.name}`;
    const key = title.replace(/ /g, '_');
    await a.wiki.edit(title, 'Resume one.');
    assert.equal((await request(`${a.s.base}/wiki.test/v1/page/${encodeURIComponent(key)}/html`)).status, 200);
    const client = listen(`${stream}?prefix=${encodeURIComponent(key)}`);
    await client.status;
    const two = await edited(title, 'Resume two.');
    const seen = await waitFor('the edit streamed', 15_000, async () => client.events.find((e) => e.data.rev === two));
    client.close();
    // Missed while away.
    const missed = [await edited(title, 'Resume three.'), await edited(title, 'Resume four.')];
    const again = listen(`${stream}?prefix=${encodeURIComponent(key)}&include=html`, { 'last-event-id': seen!.id });
    await again.status;
    const resumed = await waitFor('the missed edits streamed', 15_000, async () => (again.events.filter((e) => e.event === 'edit').length >= 2 ? again.events : undefined));
    assert.deepEqual(resumed.filter((e) => e.event === 'edit').map((e) => e.data.rev), missed);
    assert.ok(resumed.every((e) => compareTids(e.id, seen!.id) > 0 && e.data.title === key));
    assert.match(resumed.at(-1)!.data.html, /Resume four/, 'include=html carries the render');
    again.close();
    const other = listen(`${stream}?namespace=4&since=${encodeURIComponent(seen!.id)}`);
    await other.status;
    await new Promise((r) => setTimeout(r, 1500));
    assert.deepEqual(eventsOf(other.events, key), [], 'a namespace filter leaves other namespaces out');
    other.close();
    assert.equal((await request(`${stream}?since=yesterday`)).status, 400);
  });

  it('never carries the text of a revision hidden, or a page deleted, since its event (include=html)', async () => {
    const title = `Hidden stream page ${RUN} ${backend.name}`;
    const key = title.replace(/ /g, '_');
    const since = new Date().toISOString();
    const hidden = await a.wiki.edit(title, 'Visible once, secret now.');
    assert.equal((await request(`${a.s.base}/wiki.test/v1/page/${encodeURIComponent(key)}/html`)).status, 200);
    const shown = await edited(title, 'Still visible.');
    await a.wiki.hideRevision(title, hidden);
    await notify([{ page_change_kind: 'visibility_change', page: { page_title: key, namespace_id: 0 }, revision: { rev_id: hidden } }]);
    await waitFor('the service knows the text is hidden', 15_000, async () => ((await request(`${a.s.base}/wiki.test/v1/page/${encodeURIComponent(key)}/html/${hidden}`)).status === 403 ? true : undefined));
    const client = listen(`${stream}?prefix=${encodeURIComponent(key)}&include=html&since=${encodeURIComponent(since)}`);
    await client.status;
    const edits = await waitFor('both edits streamed', 15_000, async () => {
      const found = client.events.filter((e) => e.event === 'edit' && e.data.title === key);
      return found.length >= 2 ? found : undefined;
    });
    client.close();
    assert.deepEqual(edits.map((e) => e.data.rev), [hidden, shown]);
    assert.equal(edits[0]!.data.html, undefined, 'the hidden revision streamed without its text');
    assert.ok(!JSON.stringify(client.events).includes('secret now'), 'its text nowhere in the stream');
    assert.match(edits[1]!.data.html, /Still visible/, 'the visible one with it');
    // The page deleted: none of its revisions' text any more.
    await a.wiki.delete(title);
    await notify([{ page_change_kind: 'delete', page: { page_title: key, namespace_id: 0 } }]);
    await waitFor('the deletion streamed', 15_000, async () => {
      const res = await request(`${a.s.base}/wiki.test/v1/page/${encodeURIComponent(key)}/html`);
      return res.status === 404 ? true : undefined;
    });
    const after = listen(`${stream}?prefix=${encodeURIComponent(key)}&include=html&since=${encodeURIComponent(since)}`);
    await after.status;
    const all = await waitFor('the events streamed again', 15_000, async () => (after.events.some((e) => e.event === 'delete') ? after.events : undefined));
    after.close();
    assert.ok(all.filter((e) => e.event === 'edit').length >= 2);
    assert.ok(all.every((e) => e.data.html === undefined), 'no text of a deleted page');
  });

  it('cuts a client that takes nothing while events wait; it resumes with Last-Event-ID and loses nothing', async () => {
    // A long page of this test's own (the domain is shared with other files on the server engines)
    // stored, and many changes of it recorded, each carrying its HTML (include=html): far more than
    // the socket's buffers hold, so the server waits on the client.
    const title = `Stream_cut_${RUN}_${backend.name}`;
    const paragraph = 'A paragraph long enough to make the page weigh something in every event that carries it. '.repeat(8);
    await a.wiki.edit(title, Array.from({ length: 400 }, (_, i) => `${i}. ${paragraph}`).join('\n\n'));
    const stored = await request(`${a.v1}/page/${title}/html`);
    assert.ok(stored.raw.length > 200_000, `a long page (${stored.raw.length} bytes)`);
    assert.equal(stored.status, 200);
    const [rev, tid] = /^"(\d+)\/([0-9a-f-]+)"$/.exec(String(stored.headers.etag))!.slice(1);
    const log = a.s.app.page.service.changes.of('wiki.test');
    const ctx = a.s.app.router.context({ requestId: 'stream-test', admin: true, log: a.s.app.log });
    const start = new Date().toISOString();
    const n = 150;
    for (let i = 0; i < n; i++) await log.record(ctx, { kind: 'rerender', title, rev: Number(rev), tid });
    const recorded = (await log.after(ctx, ChangeLog.idBefore(Date.parse(start)), 1000)).filter((e) => e.kind === 'rerender' && e.title === title).slice(-n).map((e) => e.id);
    assert.equal(recorded.length, n);

    // Reads a stream's events; `holdMs`: takes nothing for that long after the first bytes.
    const read = (headers: Record<string, string>, holdMs: number, wanted: number) => new Promise<{ ids: string[]; cut: boolean }>((resolve, reject) => {
      const ids: string[] = [];
      let buffer = '';
      const req = http.get(`${stream}?include=html&prefix=${title}&since=${encodeURIComponent(start)}`, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
        res.setEncoding('utf8');
        let held = false;
        res.on('data', (chunk: string) => {
          buffer += chunk;
          for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
            const id = /^id: (.+)$/m.exec(buffer.slice(0, end))?.[1];
            buffer = buffer.slice(end + 2);
            if (id && recorded.includes(id)) ids.push(id);
          }
          if (ids.length >= wanted) {
            req.destroy();
            resolve({ ids, cut: false });
          } else if (holdMs > 0 && !held) {
            held = true;
            res.pause();
            setTimeout(() => res.resume(), holdMs);
          }
        });
        // The server ended the stream: the client was cut.
        res.on('close', () => resolve({ ids, cut: ids.length < wanted }));
      });
      req.on('error', reject);
    });
    const first = await read({}, 3000, n);
    assert.ok(first.cut, `the client taking nothing was cut (${first.ids.length} of ${n} events read)`);
    assert.ok(first.ids.length < n);
    const rest = await read(first.ids.length ? { 'last-event-id': first.ids.at(-1)! } : {}, 0, n - first.ids.length);
    assert.deepEqual([...first.ids, ...rest.ids], recorded, 'every event once, in order, across the cut');
  });
});
