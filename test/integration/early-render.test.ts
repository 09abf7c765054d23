import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { freshDomain, parsoidRequests, processConfig, request, sleep, startProcess, startServer, tempDir, type TestServer } from '../helpers.js';
import { parsoidWikitext, waitFor, WIKI_URL, WikiAdmin } from '../wiki.js';

describe('a cold miss of a page\'s latest content (rendering starts while its metadata is written)', () => {
  const domain = freshDomain();
  let child: ChildProcess;
  let base: string;

  before(async () => {
    const p = startProcess(processConfig(tempDir(), domain, WIKI_URL));
    child = p.child;
    base = `http://127.0.0.1:${await p.port}`;
  });
  after(() => {
    child.kill('SIGTERM');
  });

  it('makes one Parsoid request, and the page then points at the render it served', async () => {
    for (const title of ['Bodmin', 'Antique_(band)']) {
      const before = await parsoidRequests(base, domain);
      const answers = await Promise.all(Array.from({ length: 5 }, () => request(`${base}/${domain}/v1/page/${title}/html`)));
      for (const a of answers) assert.equal(a.status, 200, a.text.slice(0, 300));
      const etags = new Set(answers.map((a) => a.headers.etag));
      assert.equal(etags.size, 1, 'every answer is the same render');
      assert.equal((await parsoidRequests(base, domain)) - before, 1, 'the early render and the read\'s are one');
      const tid = JSON.parse(answers[0]!.headers.etag!.replace(/^W\//, '')).split('/')[1];
      // The render's pointers are written after it is stored, which follows the answer.
      let listed: { title: string; tid: string | null } | undefined;
      for (let i = 0; i < 40 && listed?.tid !== tid; i++) {
        await sleep(50);
        listed = (await request(`${base}/${domain}/v1/page/`)).json.items.find((p: { title: string }) => p.title === title);
      }
      assert.equal(listed?.tid, tid, 'the listing names the render served as the latest');
      const again = await request(`${base}/${domain}/v1/page/${title}/html`);
      assert.equal(again.headers.etag, answers[0]!.headers.etag);
      assert.equal(await parsoidRequests(base, domain), before + 1, 'served from storage afterwards');
    }
  });
});

/**
 * The real wiki behind a proxy that sees whether the Action API's question about a revision and
 * Parsoid's render of it are open at the same time, whichever comes first. It holds the question
 * until the render is asked for (or a few seconds have passed), so a service asking the question
 * first and the render after its answer is seen waiting out the hold; one asking for the render
 * first and the question after its answer is seen asking them apart.
 */
async function holdingProxy(): Promise<{ url: string; askedTogether: Set<number>; pagebundles: () => number; bundling: Set<number>; close: () => Promise<void> }> {
  const askedTogether = new Set<number>();
  const rendering = new Map<number, () => void>();
  const asked = new Set<number>();
  const bundling = new Set<number>();
  let pagebundles = 0;
  const server = http.createServer(async (req, res) => {
    const url = req.url ?? '';
    const bundle = /\/v3\/page\/pagebundle\/[^/]+\/(\d+)/.exec(url);
    if (bundle) {
      pagebundles++;
      const rev = Number(bundle[1]);
      bundling.add(rev);
      if (asked.has(rev)) askedTogether.add(rev);
      rendering.get(rev)?.();
    }
    const revids = /[?&]revids=(\d+)/.exec(url);
    if (revids) {
      const rev = Number(revids[1]);
      asked.add(rev);
      if (bundling.has(rev)) askedTogether.add(rev);
      else {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 3000);
          rendering.set(rev, () => (clearTimeout(timer), resolve()));
        });
      }
    }
    const upstream = await fetch(`${WIKI_URL}${url}`, { headers: { accept: String(req.headers.accept ?? '*/*') }, redirect: 'manual' });
    const body = Buffer.from(await upstream.arrayBuffer());
    if (revids) asked.delete(Number(revids[1]));
    if (bundle) bundling.delete(Number(bundle[1]));
    res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/octet-stream' }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    askedTogether,
    pagebundles: () => pagebundles,
    bundling,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** The latest revision id of a page, asked of the wiki directly. */
async function latestRevid(title: string): Promise<number> {
  const answer = (await (await fetch(`${WIKI_URL}/api.php?action=query&prop=revisions&rvprop=ids&titles=${encodeURIComponent(title)}&format=json&formatversion=2`)).json()) as { query: { pages: { revisions: { revid: number }[] }[] } };
  return answer.query.pages[0]!.revisions[0]!.revid;
}

describe('a cold miss of a revision by id (its render is asked for beside its metadata)', () => {
  let proxy: Awaited<ReturnType<typeof holdingProxy>>;
  let s: TestServer;
  let v1: string;
  before(async () => {
    proxy = await holdingProxy();
    s = await startServer({}, { action_api: `${proxy.url}/api.php`, rest_api: `${proxy.url}/rest.php`, parsoid: 'v3' });
    v1 = `${s.base}/${s.domain}/v1`;
  });
  after(async () => {
    await s?.close();
    await proxy?.close();
  });

  it('asks Parsoid while the Action API question is open, once for many readers, and stores the render', async () => {
    const rev = await latestRevid('Bodmin');
    const answers = await Promise.all(Array.from({ length: 5 }, () => request(`${v1}/page/Bodmin/html/${rev}`)));
    for (const a of answers) assert.equal(a.status, 200, a.text.slice(0, 300));
    assert.equal(new Set(answers.map((a) => a.headers.etag)).size, 1);
    assert.match(String(answers[0]!.headers.etag), new RegExp(`^"${rev}/`));
    assert.ok(proxy.askedTogether.has(rev), 'Parsoid and the Action API were asked at the same time');
    assert.equal(await parsoidRequests(s.base, s.domain), 1, 'one render for five readers');
    const again = await request(`${v1}/page/Bodmin/data-parsoid/${rev}`);
    assert.equal(again.status, 200);
    assert.equal(await parsoidRequests(s.base, s.domain), 1, 'served from storage afterwards');
  });

  it('a revision named under another page\'s title redirects, and is not rendered early again under a third', async () => {
    const rev = await latestRevid('Antique (band)');
    const wrong = await request(`${v1}/page/Bodmin/html/${rev}`);
    assert.equal(wrong.status, 302, wrong.text.slice(0, 200));
    assert.match(String(wrong.headers.location), /Antique_\(band\)\/html\//);
    // The early answer waits unclaimed for its render (five seconds from its arrival, which on a
    // busy machine may come well after the redirect), then is dropped and its revision remembered.
    await waitFor('the early page bundle answered', 60_000, async () => (proxy.bundling.has(rev) ? undefined : true));
    await sleep(6_000);
    const bundlesBefore = proxy.pagebundles();
    const third = await request(`${v1}/page/Toronto/html/${rev}`);
    assert.equal(third.status, 302);
    assert.equal(proxy.pagebundles(), bundlesBefore, 'no second early render of a revision whose first went unclaimed');
    const right = await request(`${v1}/page/${encodeURIComponent('Antique_(band)')}/html/${rev}`);
    assert.equal(right.status, 200, right.text.slice(0, 200));
    assert.match(String(right.headers.etag), new RegExp(`^"${rev}/`));
  });
});

describe('the wikitext of a cold miss comes with the Action API answer the miss asks anyway', () => {
  let s: TestServer;
  let v1: string;
  before(async () => {
    s = await startServer({}, { action_api: `${WIKI_URL}/api.php`, rest_api: `${WIKI_URL}/rest.php`, parsoid: 'v3' });
    v1 = `${s.base}/${s.domain}/v1`;
  });
  after(async () => {
    await s?.close();
  });

  it('stores the bytes Parsoid would have sent, without asking Parsoid for them (latest, and by revision id)', async () => {
    const latest = await latestRevid('Toronto');
    const older = (await new WikiAdmin().history('Bodmin', 5)).at(-1)!.revid;
    for (const [title, path, rev] of [['Toronto', '/page/Toronto/html', latest], ['Bodmin', `/page/Bodmin/html/${older}`, older]] as const) {
      const html = await request(`${v1}${path}`);
      assert.equal(html.status, 200, html.text.slice(0, 300));
      const wikitext = await request(`${v1}/page/${title}/wikitext/${rev}`);
      assert.equal(wikitext.status, 200);
      const direct = await parsoidWikitext(title, rev);
      assert.equal(wikitext.headers['content-type'], direct.type);
      assert.ok(Buffer.from(wikitext.text).equals(direct.body), `the wikitext of ${title} ${rev} is Parsoid's, byte for byte`);
    }
    assert.equal(await parsoidRequests(s.base, s.domain, 'parsoid-wikitext'), 0, 'no wikitext request to Parsoid');
    assert.equal(await parsoidRequests(s.base, s.domain), 2, 'one page bundle per render');
  });
});

/**
 * The real wiki behind a proxy that holds Parsoid's wikitext answers while `holding` is set (until
 * released, or three seconds), and notes when page bundles were answered and wikitext asked for.
 */
async function wikitextHoldingProxy() {
  const events: { what: 'bundle answered' | 'wikitext asked'; rev: number }[] = [];
  const held: (() => void)[] = [];
  const state = { holding: false };
  const server = http.createServer(async (req, res) => {
    const url = req.url ?? '';
    const wikitext = /\/v3\/page\/wikitext\/[^/]+\/(\d+)/.exec(url);
    if (wikitext) {
      events.push({ what: 'wikitext asked', rev: Number(wikitext[1]) });
      if (state.holding) {
        await new Promise<void>((resolve) => {
          const go = () => (clearTimeout(timer), resolve());
          const timer = setTimeout(() => (held.splice(held.indexOf(go), 1), resolve()), 3000);
          held.push(go);
        });
      }
    }
    const upstream = await fetch(`${WIKI_URL}${url}`, { headers: { accept: String(req.headers.accept ?? '*/*') }, redirect: 'manual' });
    const body = Buffer.from(await upstream.arrayBuffer());
    const bundle = /\/v3\/page\/pagebundle\/[^/]+\/(\d+)/.exec(url);
    if (bundle) events.push({ what: 'bundle answered', rev: Number(bundle[1]) });
    res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/octet-stream' }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    state,
    events,
    /** Wikitext answers being held now. */
    held: () => held.length,
    release: () => held.splice(0).forEach((go) => go()),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('a known revision not yet rendered: its page bundle\'s readers do not wait for its wikitext', () => {
  let proxy: Awaited<ReturnType<typeof wikitextHoldingProxy>>;
  let s: TestServer;
  let v1: string;
  before(async () => {
    proxy = await wikitextHoldingProxy();
    s = await startServer({}, { action_api: `${proxy.url}/api.php`, rest_api: `${proxy.url}/rest.php`, parsoid: 'v3' });
    v1 = `${s.base}/${s.domain}/v1`;
  });
  after(async () => {
    proxy?.release();
    await s?.close();
    await proxy?.close();
  });

  it('answers the HTML before the wikitext is asked for, and a read by its tid meanwhile waits for the whole render', async () => {
    const rev = await latestRevid('Bodmin');
    // Its latest revision named (stored), not rendered.
    assert.equal((await request(`${v1}/page/Bodmin/`)).status, 200);
    proxy.state.holding = true;
    const html = await request(`${v1}/page/Bodmin/html`);
    assert.equal(html.status, 200, html.text.slice(0, 300));
    assert.equal(proxy.held(), 1, 'answered while its wikitext is being asked for');
    const mine = proxy.events.filter((e) => e.rev === rev).map((e) => e.what);
    assert.deepEqual(mine, ['bundle answered', 'wikitext asked'], 'the wikitext is asked for once the page bundle is in');
    const tid = JSON.parse(html.headers.etag!).split('/')[1];
    let settled = false;
    const byTid = request(`${v1}/page/Bodmin/wikitext/${tid}`).finally(() => (settled = true));
    await sleep(200);
    assert.equal(settled, false, 'the read by tid waits for the wikitext');
    proxy.state.holding = false;
    proxy.release();
    const wikitext = await byTid;
    assert.equal(wikitext.status, 200, wikitext.text.slice(0, 300));
    assert.equal(wikitext.headers.etag, html.headers.etag, 'the render whose HTML was served');
    assert.ok(Buffer.from(wikitext.text).equals((await parsoidWikitext('Bodmin', rev)).body), 'Parsoid\'s wikitext, byte for byte');
    // Stored: read again from storage, not rendered again.
    let latest: { title: string; tid: string | null } | undefined;
    for (let i = 0; i < 40 && latest?.tid !== tid; i++) {
      await sleep(50);
      latest = (await request(`${v1}/page/`)).json.items.find((p: { title: string }) => p.title === 'Bodmin');
    }
    assert.equal(latest?.tid, tid, 'the stored render is the one served');
    assert.equal((await request(`${v1}/page/Bodmin/data-parsoid/${tid}`)).status, 200);
    assert.equal(await parsoidRequests(s.base, s.domain), 1, 'one page bundle');
  });

  it('a reader of the wikitext has it asked for beside the page bundle', async () => {
    const rev = await latestRevid('Antique (band)');
    assert.equal((await request(`${v1}/page/${encodeURIComponent('Antique_(band)')}/`)).status, 200);
    const wikitext = await request(`${v1}/page/${encodeURIComponent('Antique_(band)')}/wikitext`);
    assert.equal(wikitext.status, 200, wikitext.text.slice(0, 300));
    const mine = proxy.events.filter((e) => e.rev === rev).map((e) => e.what);
    assert.deepEqual(mine, ['wikitext asked', 'bundle answered']);
    assert.ok(Buffer.from(wikitext.text).equals((await parsoidWikitext('Antique (band)', rev)).body));
  });
});
