import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { request, sleep, tempDir } from './helpers.js';
import { etagOf, startAgainstWiki, type AgainstWiki } from './wiki.js';

const RUN = Date.now().toString(36);
const VCL = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../deploy/varnish/wikistore.vcl');

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}

/** A real Varnish (Debian's package, the VCL shipped in deploy/) in front of the service: saves purge it. */
describe('a real Varnish in front: what changed is purged', () => {
  let env: AgainstWiki;
  let varnish: ChildProcess;
  let cache: string;

  before(async () => {
    const port = await freePort();
    env = await startAgainstWiki({ purge_hosts: [`127.0.0.1:${port}`] });
    const dir = tempDir('wikistore-varnish-');
    // varnishd's worker runs as its own user: it must read the VCL and its state folder.
    fs.chmodSync(dir, 0o755);
    const vcl = path.join(dir, 'wikistore.vcl');
    fs.writeFileSync(vcl, fs.readFileSync(VCL, 'utf8').replace('.port = "7231";', `.port = "${new URL(env.s.base).port}";`));
    varnish = spawn('varnishd', ['-F', '-a', `127.0.0.1:${port}`, '-f', vcl, '-s', 'malloc,32m', '-n', path.join(dir, 'state')], { stdio: 'ignore' });
    cache = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 100; i++) {
      const up = await request(`${cache}/`).catch(() => undefined);
      if (up) return;
      await sleep(100);
    }
    throw new Error('varnishd did not start');
  });
  after(async () => {
    varnish?.kill('SIGTERM');
    await env?.close();
  });

  /** Whether Varnish answered from its cache (X-Varnish names the request and the cached one). */
  const hit = (res: { headers: Record<string, unknown> }) => String(res.headers['x-varnish']).trim().split(/\s+/).length === 2;

  it('caches the latest HTML, and a save through the service purges it: the next read is the new revision', async () => {
    const title = `Cached ${RUN}`.replace(/ /g, '_');
    const rev = await env.wiki.edit(title, 'Before the save.');
    const url = `${cache}/wiki.test/v1/page/${title}/html`;
    const first = await request(url);
    assert.equal(first.status, 200);
    assert.equal(etagOf(first).rev, rev);
    const second = await request(url);
    assert.ok(hit(second), `a hit: ${second.headers['x-varnish']}`);

    const saved = await request(`${env.v1}/page/${title}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: { wikitext: 'After the save.', base_revid: rev } });
    assert.equal(saved.status, 201, saved.text);
    const after = await request(url);
    assert.ok(!hit(after), 'purged: fetched anew');
    assert.equal(etagOf(after).rev, saved.json.rev);
    assert.match(after.text, /After the save/);
    assert.ok(hit(await request(url)), 'and cached again');
  });

  it('keeps serving from the cache what nothing purged (the cache is real), and passes /sys/ to the service', async () => {
    const title = `Uncached ${RUN}`.replace(/ /g, '_');
    await env.wiki.edit(title, 'Cached version.');
    const url = `${cache}/wiki.test/v1/page/${title}/wikitext`;
    assert.equal((await request(url)).text, 'Cached version.');
    await env.wiki.edit(title, 'Edited on the wiki.');
    const still = await request(url);
    assert.ok(hit(still));
    assert.equal(still.text, 'Cached version.', 'an edit the service has not seen yet is not purged');
    assert.equal((await request(`${cache}/wiki.test/sys/table/page_revisions`)).status, 403, '/sys/ passes to the service, which refuses outsiders');
  });
});
