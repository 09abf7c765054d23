import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir } from '../helpers.js';
import { freePort, startNginxFront } from '../fronts.js';
import { FAST_FOLLOWER, startAgainstWiki, waitFor, WIKI_URL, type AgainstWiki } from '../wiki.js';

const RUN = Date.now().toString(36);

/**
 * The service in front of the real wiki through nginx configured with the documented rule (docs/rest-php.md) (the
 * wiki here at the root rather than `/w/`): what the rule sends to the service is answered from
 * storage, the rest of the wiki's REST API and everything else reach the wiki.
 */
describe("rest.php/v1 through nginx, configured as docs/rest-php.md says", () => {
  let a: AgainstWiki;
  let front: string;
  let stopFront: (() => Promise<void>) | undefined;

  before(async () => {
    a = await startAgainstWiki();
    ({ front, stop: stopFront } = await startNginxFront(a.s.base));
  });
  after(async () => {
    await stopFront?.();
    await a.close();
  });

  it('sends page/ routes to the service (answered from storage), the rest of rest.php and the wiki to the wiki', async () => {
    const html = await fetch(`${front}/rest.php/v1/page/Main_Page/html`);
    assert.equal(html.status, 200);
    assert.match(String(html.headers.get('etag')), /^"\d+\/[0-9a-f-]{36}\/view\/html"$/, "the service's ETag");
    assert.match(String(html.headers.get('x-request-id')), /^[0-9a-f-]{36}$/, "the service's request id");
    const bare = await (await fetch(`${front}/rest.php/v1/page/Main_Page/bare`)).json();
    assert.deepEqual(bare, await (await fetch(`${WIKI_URL}/rest.php/v1/page/Main_Page/bare`)).json());
    const history = await fetch(`${front}/rest.php/v1/page/Main_Page/history`);
    assert.equal(history.status, 200);
    assert.deepEqual(await history.json(), await (await fetch(`${WIKI_URL}/rest.php/v1/page/Main_Page/history`)).json());
    const search = await fetch(`${front}/rest.php/v1/search/page?q=Main&limit=1`);
    assert.equal(search.status, 200, 'routes outside the rule reach the wiki');
    assert.doesNotMatch(String(search.headers.get('x-request-id')), /^[0-9a-f]{8}-/, 'not through the service');
  });

  it('keeps a title as the client spelt it: %2F stays in the title, another spelling redirects within the front URL', async () => {
    const title = `Proxy/Sub page ${RUN}`;
    await a.wiki.edit(title, 'A subpage behind the proxy.');
    const key = encodeURIComponent(title.replace(/ /g, '_'));
    const ours = await fetch(`${front}/rest.php/v1/page/${key}/bare`);
    assert.equal(ours.status, 200);
    assert.deepEqual(await ours.json(), await (await fetch(`${WIKI_URL}/rest.php/v1/page/${key}/bare`)).json());
    // Spaces for underscores is the form MediaWiki links to itself (html_url): answered as it is.
    const spaced = await fetch(`${front}/rest.php/v1/page/${encodeURIComponent(title)}/with_html?redirect=no`, { redirect: 'manual' });
    assert.equal(spaced.status, 200);
    const lower = encodeURIComponent(`p${title.slice(1)}`);
    const spelled = await fetch(`${front}/rest.php/v1/page/${lower}/with_html?redirect=no`, { redirect: 'manual' });
    assert.equal(spelled.status, 301);
    const to = new URL(String(spelled.headers.get('location')), `${front}/rest.php/v1/page/${lower}/with_html`);
    assert.equal(to.href, `${front}/rest.php/v1/page/${key}/with_html?redirect=no`);
    const followed = await fetch(to);
    assert.equal(followed.status, 200);
    assert.match(((await followed.json()) as { html: string }).html, /A subpage behind the proxy/);
  });
});

/**
 * The service behind a real Varnish that fronts the wiki, configured by the VCL shipped in
 * deploy/varnish/mediawiki-front.vcl (paths and ports set as its comments say): the REST API's page
 * routes cached from the service and purged when the wiki changes, the rest from the wiki.
 */
describe('rest.php/v1 through Varnish in front of the wiki (deploy/varnish/mediawiki-front.vcl)', () => {
  let a: AgainstWiki;
  let varnish: ChildProcess;
  let front: string;

  before(async () => {
    const port = await freePort();
    a = await startAgainstWiki({ ...FAST_FOLLOWER, follow_changes: true, purge_hosts: [`127.0.0.1:${port}`] });
    const dir = tempDir('wikistore-front-');
    // varnishd's worker runs as its own user: it must read the VCL and its state folder.
    await chmod(dir, 0o755);
    const wiki = new URL(WIKI_URL);
    const vcl = (await readFile('deploy/varnish/mediawiki-front.vcl', 'utf8'))
      .replace('.port = "8080";', `.port = "${wiki.port}";`)
      .replace('.port = "7231";', `.port = "${new URL(a.s.base).port}";`)
      .replace(/\^\/w\\?\//g, (m) => m.replace('/w', ''))
      .replace(/wiki\.example/g, 'wiki.test');
    await writeFile(path.join(dir, 'front.vcl'), vcl);
    varnish = spawn('varnishd', ['-F', '-a', `127.0.0.1:${port}`, '-f', path.join(dir, 'front.vcl'), '-s', 'malloc,32m', '-n', path.join(dir, 'state')], { stdio: 'ignore' });
    front = `http://127.0.0.1:${port}`;
    await waitFor('varnishd answering', 10_000, async () => (await fetch(`${front}/api.php?action=query&format=json`).then((r) => r.status === 200, () => false)) || undefined);
  });
  after(async () => {
    varnish?.kill('SIGTERM');
    await a.close();
  });

  it('serves page HTML from the service, cached, and purged when the page is edited on the wiki; the rest from the wiki', async () => {
    const title = `Varnish front ${RUN}`;
    const key = encodeURIComponent(title.replace(/ /g, '_'));
    await a.wiki.edit(title, 'Before the edit.');
    const url = `${front}/rest.php/v1/page/${key}/html`;
    const first = await fetch(url);
    assert.equal(first.status, 200);
    assert.match(await first.text(), /Before the edit/);
    const second = await fetch(url);
    assert.match(await second.text(), /Before the edit/);
    assert.equal(String(second.headers.get('x-varnish')).trim().split(/\s+/).length, 2, 'the second read is a cache hit');
    assert.equal(second.headers.get('xkey'), null, 'surrogate keys stay in the cache');
    // The title with spaces, as MediaWiki's html_url spells it: cached under its own URL, purged with the rest.
    const spaced = `${front}/rest.php/v1/page/${encodeURIComponent(title)}/html`;
    assert.match(await (await fetch(spaced)).text(), /Before the edit/);
    const spacedAgain = await fetch(spaced);
    assert.equal(String(spacedAgain.headers.get('x-varnish')).trim().split(/\s+/).length, 2, 'the spaced spelling is cached too');
    await spacedAgain.arrayBuffer();
    const rev = await a.wiki.edit(title, 'After the edit.');
    for (const at of [url, spaced]) {
      const fresh = await waitFor(`the cached page purged after the edit (${at})`, 10_000, async () => {
        const res = await fetch(at);
        const text = await res.text();
        return text.includes('After the edit') ? res : undefined;
      });
      assert.match(String(fresh.headers.get('etag')), new RegExp(`^"${rev}/`));
    }
    const siteinfo = await fetch(`${front}/api.php?action=query&meta=siteinfo&format=json`);
    assert.match(await siteinfo.text(), /"generator":"MediaWiki/, 'the rest of the wiki is the wiki');
  });
});
