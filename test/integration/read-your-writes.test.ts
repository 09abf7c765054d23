import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { admin, request, startServer, type TestServer } from '../helpers.js';
import { FAST_FOLLOWER, startAgainstWiki, storedPage, waitFor, WIKI_URL, WikiAdmin, type AgainstWiki } from '../wiki.js';
import { startNginxFront } from '../fronts.js';

/** Where the test wiki reads where its notices go (scripts/wiki.sh includes it when present). */
const NOTIFY_SETTINGS = path.resolve(process.env.WIKISTORE_TEST_WIKI_DIR ?? '.wiki', 'NotifySettings.php');
const RUN = Date.now().toString(36);
const SECRET = `notice-secret-${RUN}-0123456789`;
const TIMEOUT_S = 1;

/** The wiki's notices sent to `url` from now on (as an operator's LocalSettings.php sets them). */
async function notifyTo(url: string | undefined): Promise<void> {
  if (url === undefined) return rm(NOTIFY_SETTINGS, { force: true });
  await writeFile(NOTIFY_SETTINGS, `<?php\n$wgWikistoreNotifyUrl = '${url}';\n$wgWikistoreNotifySecret = '${SECRET}';\n$wgWikistoreNotifyTimeout = ${TIMEOUT_S};\n`);
  // PHP's opcache looks at an included file's time stamp again only 2 s after it last did (its
  // revalidate_freq, counted in whole seconds): edits up to 3 s later were seen to miss the change.
  await new Promise((r) => setTimeout(r, 3100));
}

const quantile = (values: number[], q: number) => [...values].sort((x, y) => x - y)[Math.min(values.length - 1, Math.floor(q * values.length))]!;

/**
 * Read-your-writes: the WikistoreNotify extension, loaded by the real wiki, tells the service of
 * each change before the wiki answers its editor, so a read made right after the edit returns
 * sees it. The service asks the wiki for the latest revision only once an hour here: what it
 * serves fresh, it learnt from the notice.
 */
describe('read-your-writes: the wiki tells the service of each change as it happens', () => {
  let a: AgainstWiki;
  /** rest.php/v1 as clients reach it: nginx in front of the wiki, with the documented rule (docs/rest-php.md). */
  let rest: string;
  let stopFront: (() => Promise<void>) | undefined;

  before(async () => {
    a = await startAgainstWiki({}, { notice_secret: SECRET });
    const front = await startNginxFront(a.s.base);
    stopFront = front.stop;
    rest = `${front.front}/rest.php/v1`;
    await notifyTo(`${a.s.base}/wiki.test/v1/changes`);
  });
  after(async () => {
    await notifyTo(undefined);
    // A before that failed half way leaves what it started stopped all the same (else the process stays up).
    await stopFront?.();
    await a?.close();
  });

  it('200 edits made on the wiki: each read made right after its edit shows the new revision (html and with_html)', async (t) => {
    const pages = 4;
    const perPage = 50;
    const took: number[] = [];
    const stale: string[] = [];
    await Promise.all(Array.from({ length: pages }, async (_, p) => {
      const title = `Read your writes ${RUN} ${p}`;
      const key = title.replace(/ /g, '_');
      for (let i = 0; i < perPage; i++) {
        const started = performance.now();
        const rev = await a.wiki.edit(title, `Edit number ${i} of page ${p}.`);
        took.push(performance.now() - started);
        const html = await request(`${rest}/page/${encodeURIComponent(key)}/html`);
        const both = await request(`${rest}/page/${encodeURIComponent(key)}/with_html`);
        if (!String(html.headers.etag).startsWith(`"${rev}/`) || !html.text.includes(`Edit number ${i} of`)) stale.push(`${title} ${i}: html ${html.headers.etag}`);
        if (both.json?.latest?.id !== rev || !String(both.json.html).includes(`Edit number ${i} of`)) stale.push(`${title} ${i}: with_html ${both.json?.latest?.id}`);
      }
    }));
    assert.deepEqual(stale, [], 'every read after an edit shows that edit');
    t.diagnostic(`edit on the wiki with notices: median ${quantile(took, 0.5).toFixed(0)} ms, p99 ${quantile(took, 0.99).toFixed(0)} ms`);
  });

  it('a move and a deletion are served at once too (the old title redirects, the deleted page is gone)', async () => {
    const from = `Move notice ${RUN}`;
    const to = `Moved notice ${RUN}`;
    await a.wiki.edit(from, 'About to move.');
    assert.equal((await request(`${rest}/page/${encodeURIComponent(from.replace(/ /g, '_'))}/bare`)).status, 200);
    await a.wiki.move(from, to, { noredirect: true });
    const moved = await request(`${rest}/page/${encodeURIComponent(to.replace(/ /g, '_'))}/with_html`);
    assert.equal(moved.status, 200, moved.text);
    assert.match(moved.json.html, /About to move/);
    const old = await request(`${rest}/page/${encodeURIComponent(from.replace(/ /g, '_'))}/html`);
    assert.equal(old.status, 307, 'the old title leads to where the page went');
    await a.wiki.delete(to);
    assert.equal((await request(`${rest}/page/${encodeURIComponent(to.replace(/ /g, '_'))}/html`)).status, 404);
  });

  it('refuses notices without the secret (403) and malformed ones (400); takes EventBus page_change events', async () => {
    const changes = `${a.s.base}/wiki.test/v1/changes`;
    const event = { page_change_kind: 'edit', dt: new Date().toISOString(), page: { page_title: 'Main_Page', namespace_id: 0 } };
    const json = { 'content-type': 'application/json' };
    assert.equal((await request(changes, { method: 'POST', headers: json, body: [event] })).status, 403);
    assert.equal((await request(changes, { method: 'POST', headers: { ...json, authorization: 'Bearer wrong-secret-0123456789' }, body: [event] })).status, 403);
    const bad = await request(changes, { method: 'POST', headers: { ...json, authorization: `Bearer ${SECRET}` }, body: [{ page_change_kind: 'sneeze', page: { page_title: 'X' } }] });
    assert.equal(bad.status, 400);
    assert.equal(bad.headers['content-type'], 'application/problem+json');
    const ok = await request(`${changes}?secret=${encodeURIComponent(SECRET)}`, { method: 'POST', headers: json, body: [event] });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json.applied, 1);
  });

  it('sends the notice of every kind of change before the wiki answers it (a move too, which MediaWiki completes after answering)', async () => {
    // A service that takes its time over each notice: the wiki can answer a change only after the
    // notice's answer if it sent the notice first, whatever the machine's load.
    const DELAY_MS = 400;
    const arrivals: { at: number; kinds: string[] }[] = [];
    const slow = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        arrivals.push({ at: performance.now(), kinds: (JSON.parse(body) as { page_change_kind: string }[]).map((e) => e.page_change_kind) });
        setTimeout(() => res.end('{"applied":0}'), DELAY_MS);
      });
    });
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    try {
      await notifyTo(`http://127.0.0.1:${(slow.address() as net.AddressInfo).port}/wiki.test/v1/changes`);
      const wiki = await new WikiAdmin().login();
      const title = `Notice order ${RUN}`;
      let first = 0;
      const changes: [string, () => Promise<unknown>][] = [
        ['create', async () => (first = await wiki.edit(title, 'Created.'))],
        ['edit', () => wiki.edit(title, 'Edited.')],
        ['visibility_change', () => wiki.hideRevision(title, first)],
        ['protect', () => wiki.protect(title)],
        ['move', () => wiki.move(title, `${title} moved`, { noredirect: true })],
        ['delete', () => wiki.delete(`${title} moved`)],
        ['undelete', () => wiki.undelete(`${title} moved`)],
      ];
      for (const [kind, change] of changes) {
        const seen = arrivals.length;
        await change();
        const answeredAt = performance.now();
        const notice = arrivals.slice(seen).find((n) => n.kinds.includes(kind));
        assert.ok(notice, `the ${kind} was told of before the wiki answered it (notices since: ${JSON.stringify(arrivals.slice(seen))})`);
        assert.ok(answeredAt - notice.at >= DELAY_MS - 5, `the wiki answered the ${kind} ${(answeredAt - notice.at).toFixed(0)} ms after its notice arrived: after the notice's answer`);
      }
    } finally {
      slow.close();
      await notifyTo(`${a.s.base}/wiki.test/v1/changes`);
    }
  });

  it('a service that does not answer slows an edit by the timeout at most, and the edit succeeds', async () => {
    // A port that accepts connections and never answers: the worst a service can do.
    const holes = new Set<net.Socket>();
    const hole = net.createServer((s) => holes.add(s.on('error', () => undefined)));
    await new Promise<void>((r) => hole.listen(0, '127.0.0.1', r));
    try {
      await notifyTo(`http://127.0.0.1:${(hole.address() as net.AddressInfo).port}/wiki.test/v1/changes`);
      const wiki = await new WikiAdmin().login();
      const took: number[] = [];
      for (let i = 0; i < 3; i++) {
        const started = performance.now();
        assert.ok((await wiki.edit(`Service down ${RUN}`, `Edit ${i} while the service hangs.`)) > 0);
        took.push(performance.now() - started);
      }
      assert.ok(Math.max(...took) < TIMEOUT_S * 1000 + 1500, `edits took ${took.map((n) => n.toFixed(0)).join(', ')} ms`);
    } finally {
      for (const s of holes) s.destroy();
      hole.close();
      await notifyTo(`${a.s.base}/wiki.test/v1/changes`);
    }
  });
});

describe('read-your-writes: a notice lost is caught by the poll', () => {
  let a: AgainstWiki;
  before(async () => {
    a = await startAgainstWiki({ ...FAST_FOLLOWER }, { notice_secret: SECRET });
  });
  after(() => a.close());

  it('an edit whose notice went nowhere is served within the poll interval', async () => {
    const title = `Lost notice ${RUN}`;
    const key = encodeURIComponent(title.replace(/ /g, '_'));
    await a.wiki.edit(title, 'First.');
    await waitFor('the first revision served', 10_000, async () => ((await request(`${a.s.base}/wiki.test/rest.php/v1/page/${key}/bare`)).status === 200 ? true : undefined));
    // No notice reaches this service (the wiki's go to another, or nowhere): only its poll can tell it.
    const rev = await a.wiki.edit(title, 'Second, never noticed.');
    const seen = await waitFor('the edit served through the poll', 10_000, async () => {
      const res = await request(`${a.s.base}/wiki.test/rest.php/v1/page/${key}/bare`);
      return res.json.latest?.id === rev ? true : undefined;
    });
    assert.equal(seen, true);
  });
});

/**
 * A relay in front of the wiki that, once told to, keeps back the wiki's answer to the next Action
 * API question naming a title (asked, answered by the wiki, and held until released): an answer
 * that arrives after a later change's notice.
 */
class HoldingRelay {
  private server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const named = this.holding !== undefined && req.url!.includes('api.php') && `${req.url} ${body}`.includes(this.holding);
      if (named) this.holding = undefined;
      const upstream = http.request(`${WIKI_URL}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
        const parts: Buffer[] = [];
        answer.on('data', (c: Buffer) => parts.push(c));
        answer.on('end', () => {
          const send = () => {
            res.writeHead(answer.statusCode!, answer.headers);
            res.end(Buffer.concat(parts));
          };
          if (named) this.held = send;
          else send();
        });
      });
      upstream.end(body);
    });
  });
  private holding: string | undefined;
  held: (() => void) | undefined;
  port = 0;

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as net.AddressInfo).port;
    return this;
  }

  hold(title: string): void {
    this.holding = title;
  }

  release(): void {
    this.held?.();
    this.held = undefined;
  }

  stop(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

describe('read-your-writes: an answer the wiki gave before a change, arriving after its notice', () => {
  const SECRET_RACE = `race-secret-${RUN}-0123456789`;
  let relay: HoldingRelay;
  let s: TestServer;
  let wiki: WikiAdmin;

  before(async () => {
    relay = await new HoldingRelay().start();
    const url = `http://127.0.0.1:${relay.port}`;
    s = await startServer({
      wikis: { 'wiki.test': { action_api: `${url}/api.php`, rest_api: `${url}/rest.php`, notice_secret: SECRET_RACE } },
      latest_check_interval: 3600,
      follow_changes: false,
    });
    wiki = await new WikiAdmin().login();
  });
  after(async () => {
    await s.close();
    await relay.stop();
  });

  it('leaves the page unchecked, so the next read asks the wiki and shows the change', async () => {
    const title = `RaceOfNotices${RUN}`;
    const bare = (headers: Record<string, string> = {}) => request(`${s.base}/wiki.test/rest.php/v1/page/${title}/bare`, { headers });
    const first = await wiki.edit(title, 'First.');
    assert.equal((await bare()).json.latest.id, first);
    // A read asks the wiki anew; the wiki answers (the first revision), and the answer is held back.
    relay.hold(title);
    const asked = bare({ ...admin, 'cache-control': 'no-cache' });
    await waitFor('the wiki to have answered', 10_000, async () => relay.held);
    // Meanwhile the page is edited, and the wiki tells the service (as the extension does).
    const second = await wiki.edit(title, 'Second.');
    const noticed = await request(`${s.base}/wiki.test/v1/changes`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SECRET_RACE}` },
      body: [{ page_change_kind: 'edit', dt: new Date().toISOString(), page: { page_title: title, namespace_id: 0 }, revision: { rev_id: second } }],
    });
    assert.equal(noticed.status, 200, noticed.text);
    // The notice's own refresh has stored the second revision before the old answer arrives.
    await waitFor('the notice\'s refresh', 10_000, async () => ((await storedPage(s.base, title))?.latest_rev === second ? true : undefined));
    relay.release();
    assert.equal((await asked).json.latest.id, first, 'the read asked before the edit answers what the wiki said then');
    // The old answer must not pass for a check made after the notice.
    assert.equal((await bare()).json.latest.id, second, 'a read after the notice shows the change');
  });
});

describe('read-your-writes: the first notice a new service takes', () => {
  const SECRET_FIRST = `first-secret-${RUN}-0123456789`;
  let a: AgainstWiki;
  before(async () => {
    // Notices alone (no follower, which would load the site info for its own work).
    a = await startAgainstWiki({ follow_changes: false }, { notice_secret: SECRET_FIRST });
  });
  after(() => a.close());

  it('needs nothing of the wiki: its title rules were loaded at start', async () => {
    await waitFor('the site info stored', 10_000, async () => {
      const res = await request(`${a.s.base}/wiki.test/sys/table/site_info/_query`, { method: 'POST', headers: admin, body: { attributes: { name: 'siteinfo' } } });
      return res.json?.items?.length ? true : undefined;
    });
    // The wiki's workers all busy with edits that wait for their notices: no answer from it.
    a.proxy.blackHole();
    const started = performance.now();
    const noticed = await request(`${a.s.base}/wiki.test/v1/changes`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SECRET_FIRST}` },
      body: [{ page_change_kind: 'create', dt: new Date().toISOString(), page: { page_title: `First notice ${RUN}`, namespace_id: 0 } }],
    });
    const took = performance.now() - started;
    a.proxy.restore();
    assert.equal(noticed.status, 200, noticed.text);
    assert.ok(took < 2000, `the notice was answered in ${took.toFixed(0)} ms`);
  });
});
