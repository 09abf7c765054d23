import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir } from '../helpers.js';
import { startAgainstWiki, waitFor, WIKI_URL, type AgainstWiki } from '../wiki.js';

const RUN = Date.now().toString(36);

/** The README's nginx rule for MediaWiki's REST API, as an operator copies it. */
async function readmeNginxRule(): Promise<{ http: string; server: string }> {
  const readme = await readFile('README.md', 'utf8');
  const block = /```nginx\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf("### In front of MediaWiki's REST API")));
  assert.ok(block, 'the README shows the nginx rule');
  const [http, server] = block[1]!.split('# in the wiki\'s server {}');
  return { http: http!.replace('# in http {}', ''), server: server! };
}

const freePort = () => new Promise<number>((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => {
    const { port } = s.address() as net.AddressInfo;
    s.close(() => resolve(port));
  });
});

/**
 * The service in front of the real wiki through nginx configured with the README's rule (the
 * wiki here at the root rather than `/w/`): what the rule sends to the service is answered from
 * storage, the rest of the wiki's REST API and everything else reach the wiki.
 */
describe("rest.php/v1 through nginx, configured as the README says", () => {
  let a: AgainstWiki;
  let nginx: ChildProcess;
  let front: string;

  before(async () => {
    a = await startAgainstWiki();
    const dir = tempDir();
    const port = await freePort();
    const service = new URL(a.s.base);
    const rule = await readmeNginxRule();
    const adapt = (text: string) => text.replace(/\/w\//g, '/').replace(/\^\/w\\\//g, '^/').replace(/wiki\.example/g, 'wiki.test').replace('127.0.0.1:7231', service.host);
    const wiki = new URL(WIKI_URL);
    await writeFile(path.join(dir, 'nginx.conf'), `
user root;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fastcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
  ${adapt(rule.http)}
  server {
    listen 127.0.0.1:${port};
    ${adapt(rule.server)}
    location / { proxy_pass http://${wiki.host}; }
  }
}
`);
    nginx = spawn('/usr/sbin/nginx', ['-c', path.join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    nginx.stderr!.on('data', (d) => (stderr += d));
    front = `http://127.0.0.1:${port}`;
    await waitFor(`nginx answering (${stderr})`, 10_000, async () => (await fetch(`${front}/api.php?action=query&format=json`).then((r) => r.status === 200, () => false)) || undefined);
  });
  after(async () => {
    nginx?.kill('SIGTERM');
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
    const spelled = await fetch(`${front}/rest.php/v1/page/${encodeURIComponent(title)}/with_html?redirect=no`, { redirect: 'manual' });
    assert.equal(spelled.status, 301);
    const to = new URL(String(spelled.headers.get('location')), `${front}/rest.php/v1/page/${encodeURIComponent(title)}/with_html`);
    assert.equal(to.href, `${front}/rest.php/v1/page/${key}/with_html?redirect=no`);
    const followed = await fetch(to);
    assert.equal(followed.status, 200);
    assert.match(((await followed.json()) as { html: string }).html, /A subpage behind the proxy/);
  });
});
