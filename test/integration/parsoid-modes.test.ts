import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { admin, request, startServer, type TestServer } from '../helpers.js';
import { etagOf, WIKI_URL, WikiAdmin } from '../wiki.js';

const RUN = Date.now().toString(36);

/**
 * The real wiki as Wikimedia's wikis look from outside: Parsoid's own routes
 * (`rest.php/{domain}/v3/...`) answer rest.php's "no such route", everything else is passed on.
 */
async function wikiWithoutV3(noRoute = (url: string) => /^\/rest\.php\/[^/]+\/v3\//.test(url)): Promise<{ url: string; v3Requests: () => number; close: () => Promise<void> }> {
  let v3 = 0;
  const server = http.createServer(async (req, res) => {
    if (noRoute(req.url ?? '')) {
      v3++;
      res.writeHead(404, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ messageTranslations: { en: `The requested relative path (${req.url}) did not match any known handler` }, httpCode: 404, httpReason: 'Not Found' }));
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const upstream = await fetch(`${WIKI_URL}${req.url}`, {
      method: req.method,
      headers: Object.fromEntries(Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k)) as [string, string][]),
      body: chunks.length ? Buffer.concat(chunks) : undefined,
      redirect: 'manual',
    });
    const body = Buffer.from(await upstream.arrayBuffer());
    const headers = Object.fromEntries([...upstream.headers].filter(([k]) => !['content-encoding', 'content-length', 'transfer-encoding', 'connection'].includes(k)));
    res.writeHead(upstream.status, headers).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    v3Requests: () => v3,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

describe('parsoid: auto against a wiki without Parsoid\'s own routes (as Wikimedia\'s)', () => {
  let wiki: Awaited<ReturnType<typeof wikiWithoutV3>>;
  let s: TestServer;
  let admin_: WikiAdmin;
  before(async () => {
    wiki = await wikiWithoutV3();
    s = await startServer({ wikis: { 'wiki.test': { action_api: `${wiki.url}/api.php`, rest_api: `${wiki.url}/rest.php`, parsoid: 'auto' } } });
    admin_ = await new WikiAdmin().login();
  });
  after(async () => {
    await s?.close();
    await wiki?.close();
  });

  it('finds out once that the core REST API serves the wiki, remembers it in storage, and serves pages through it', async () => {
    const first = await request(`${s.base}/wiki.test/v1/page/Bodmin/html`);
    assert.equal(first.status, 200, first.text.slice(0, 300));
    assert.doesNotMatch(first.text, / data-mw=/);
    const tried = wiki.v3Requests();
    assert.ok(tried >= 2 && tried <= 3, 'v3 was tried for the first render (its page bundle and wikitext side by side), then confirmed missing by one probe');
    const inline = await request(`${s.base}/wiki.test/v1/page/Bodmin/html?data-mw=inline`);
    assert.match(inline.text, / data-mw='\{"parts"/, 'data-mw inline when asked for');
    const dp = await request(`${s.base}/wiki.test/v1/page/Bodmin/data-parsoid`);
    assert.equal(dp.status, 404);
    assert.equal(dp.json.type, 'urn:problem:data-parsoid-unavailable');
    assert.equal((await request(`${s.base}/wiki.test/v1/page/United_Kingdom/html`)).status, 200);
    assert.equal(wiki.v3Requests(), tried, 'and not again');
    const stored = await request(`${s.base}/wiki.test/sys/table/site_info/_query`, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: { attributes: { name: 'parsoid_mode' } } });
    assert.deepEqual(stored.json.items[0]?.info, { mode: 'core' }, 'remembered in storage for other processes and restarts');
  });

  it('saves wikitext through the Action API and stores the new revision\'s render from the core API', async () => {
    const title = `Core save ${RUN}`.replace(/ /g, '_');
    const rev = await admin_.edit(title, 'Core mode page.');
    const saved = await request(`${s.base}/wiki.test/v1/page/${title}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: { wikitext: 'Saved in core mode.', base_revid: rev } });
    assert.equal(saved.status, 201, saved.text);
    const html = await request(`${s.base}/wiki.test/v1/page/${title}/html`);
    assert.equal(etagOf(html).rev, saved.json.rev);
    assert.match(html.text, /Saved in core mode/);
  });

  it('answers a transform the wiki does not expose with a clear 501, not a 5xx of its own', async () => {
    const res = await request(`${s.base}/wiki.test/v1/transform/wikitext/to/html`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: { wikitext: "''hi''" } });
    assert.equal(res.status, 501, res.text);
    assert.equal(res.json.type, 'urn:problem:upstream-route-missing');
    assert.match(res.json.detail, /does not expose/);
    // rest.php's lint: MediaWiki 1.39's core API has no such route either.
    const lint = await fetch(`${s.base}/wiki.test/rest.php/v1/transform/wikitext/to/lint`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ wikitext: '<b>open' }) });
    assert.equal(lint.status, 501, await lint.clone().text());
    assert.equal(((await lint.json()) as { errorKey?: string }).errorKey, 'upstream-route-missing');
  });
});

describe('parsoid: auto, when one request\'s path matches no route of a wiki that has them', () => {
  let wiki: Awaited<ReturnType<typeof wikiWithoutV3>>;
  let s: TestServer;
  before(async () => {
    // As a title that makes another path would: only this page's v3 requests find no route.
    wiki = await wikiWithoutV3((url) => /^\/rest\.php\/[^/]+\/v3\/page\/[^/]+\/BBDO\//.test(url));
    s = await startServer({ wikis: { 'wiki.test': { action_api: `${wiki.url}/api.php`, rest_api: `${wiki.url}/rest.php`, parsoid: 'auto' } } });
  });
  after(async () => {
    await s?.close();
    await wiki?.close();
  });

  it('answers that request 404 and keeps serving the wiki through its v3 routes (the mode is not forged by one answer)', async () => {
    const odd = await request(`${s.base}/wiki.test/v1/page/BBDO/html`);
    assert.equal(odd.status, 404, odd.text.slice(0, 300));
    assert.equal(odd.json.type, 'urn:problem:upstream-no-route');
    const dp = await request(`${s.base}/wiki.test/v1/page/Bodmin/data-parsoid`);
    assert.equal(dp.status, 200, 'data-parsoid exists only through v3: the wiki is still served through it');
    const stored = await request(`${s.base}/wiki.test/sys/table/site_info/_query`, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: { attributes: { name: 'parsoid_mode' } } });
    assert.notDeepEqual(stored.json.items?.[0]?.info, { mode: 'core' }, 'nothing stored that would switch other processes');
  });
});
