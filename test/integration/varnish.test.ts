import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { request, sleep, tempDir } from '../helpers.js';
import type { Config } from '../../src/config.js';
import { etagOf, FAST_FOLLOWER, startAgainstWiki, storedPage, waitFor, type AgainstWiki } from '../wiki.js';

const RUN = Date.now().toString(36);
const VCL = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../deploy/varnish/wikistore.vcl');

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}

/** The service against the real wiki with a real Varnish (Debian's package, the VCL shipped in deploy/) in front. */
async function behindVarnish(overrides: Partial<Config>): Promise<{ env: AgainstWiki; varnish: ChildProcess; cache: string }> {
  const port = await freePort();
  const env = await startAgainstWiki({ purge_hosts: [`127.0.0.1:${port}`], ...overrides });
  const dir = tempDir('wikistore-varnish-');
  // varnishd's worker runs as its own user: it must read the VCL and its state folder.
  fs.chmodSync(dir, 0o755);
  const vcl = path.join(dir, 'wikistore.vcl');
  fs.writeFileSync(vcl, fs.readFileSync(VCL, 'utf8').replace('.port = "7231";', `.port = "${new URL(env.s.base).port}";`));
  const varnish = spawn('varnishd', ['-F', '-a', `127.0.0.1:${port}`, '-f', vcl, '-s', 'malloc,32m', '-n', path.join(dir, 'state')], { stdio: 'ignore' });
  let failed: Error | undefined;
  varnish.on('error', (err) => (failed = err));
  const cache = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100 && !failed; i++) {
    const up = await request(`${cache}/`).catch(() => undefined);
    if (up) return { env, varnish, cache };
    await sleep(100);
  }
  // Nothing is left running: the suite fails instead of hanging on the service it started.
  varnish.kill('SIGTERM');
  await env.close();
  throw new Error(`varnishd did not start${failed ? `: ${failed.message}` : ''}`);
}

/** Whether Varnish answered from its cache (X-Varnish names the request and the cached one). */
const hit = (res: { headers: Record<string, unknown> }) => String(res.headers['x-varnish']).trim().split(/\s+/).length === 2;

/** A real Varnish in front of the service: saves purge it. */
describe('a real Varnish in front: what changed is purged', () => {
  let env: AgainstWiki;
  let varnish: ChildProcess;
  let cache: string;

  before(async () => {
    ({ env, varnish, cache } = await behindVarnish({}));
  });
  after(async () => {
    varnish?.kill('SIGTERM');
    await env?.close();
  });

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

/**
 * The follower keeps a real Varnish correct: what changes on the wiki is purged within seconds,
 * under every URL form of the page (surrogate keys).
 */
describe('a real Varnish in front of a service following the wiki', () => {
  let env: AgainstWiki;
  let varnish: ChildProcess;
  let cache: string;
  before(async () => {
    ({ env, varnish, cache } = await behindVarnish(FAST_FOLLOWER));
  });
  after(async () => {
    varnish?.kill('SIGTERM');
    await env?.close();
  });

  /** Reads `url` through Varnish until `ok` holds, within 3 s. */
  const within3s = (what: string, url: string, ok: (res: Awaited<ReturnType<typeof request>>) => boolean) =>
    waitFor(what, 3000, async () => {
      const res = await request(url);
      return ok(res) ? res : undefined;
    });

  it('serves a page edited on the wiki through the cache within 3 s of its render stored, then from the cache again', async () => {
    const title = `Cache follows ${RUN}`.replace(/ /g, '_');
    const first = await env.wiki.edit(title, 'Cached first.');
    const url = `${cache}/wiki.test/v1/page/${title}/html`;
    assert.equal(etagOf(await request(url)).rev, first);
    assert.ok(hit(await request(url)), 'the second read is a cache hit');
    const second = await env.wiki.edit(title, 'Edited on the wiki.');
    // The new revision's render waits its turn at the wiki's PHP workers (other files' renders
    // share them: one run on a loaded machine took longer than 3 s); from the moment it is
    // stored, the cache has it within 3 s.
    await waitFor('the new revision stored and rendered', 30_000, async () => {
      const page = await storedPage(env.s.base, title);
      return page?.latest_rev === second && page.latest_tid ? true : undefined;
    });
    const fresh = await within3s('the new revision through Varnish', url, (res) => res.status === 200 && etagOf(res).rev === second);
    assert.match(fresh.text, /Edited on the wiki/);
    assert.ok(hit(await request(url)), 'and cached again');
  });

  it('turns a cached red link blue within 3 s of the page it names being created, without a new render', async () => {
    const title = `Cache links ${RUN}`.replace(/ /g, '_');
    const target = `Cache link target ${RUN}`.replace(/ /g, '_');
    await env.wiki.edit(title, `A link to [[${target}]].`);
    const url = `${cache}/wiki.test/v1/page/${title}/display`;
    const red = (html: string) => new RegExp(`class="new"[^>]*>${target.replace(/_/g, ' ')}<`).test(html) || new RegExp(`href="./${target}\\?action=edit&amp;redlink=1"`).test(html);
    const first = await request(url);
    assert.ok(red(first.text), 'red while the page does not exist');
    assert.ok(hit(await request(url)), 'the display is cached');
    await env.wiki.edit(target, 'Created.');
    const blue = await within3s('the link to turn blue through Varnish', url, (res) => res.status === 200 && !red(res.text));
    assert.equal(String(blue.headers.etag).split('/')[2], String(first.headers.etag).split('/')[2], 'the same render');
    assert.ok(hit(await request(url)), 'and cached again');
  });

  it('answers 404 through the cache within 3 s for a page deleted on the wiki', async () => {
    const title = `Cache deleted ${RUN}`.replace(/ /g, '_');
    await env.wiki.edit(title, 'Cached, then deleted.');
    const url = `${cache}/wiki.test/v1/page/${title}/html`;
    assert.equal((await request(url)).status, 200);
    assert.ok(hit(await request(url)));
    await env.wiki.delete(title);
    await within3s('404 through Varnish', url, (res) => res.status === 404);
  });

  it('serves a moved page under its new title, and the old one no longer from the cache', async () => {
    const from = `Cache move ${RUN}`.replace(/ /g, '_');
    const to = `Cache moved ${RUN}`.replace(/ /g, '_');
    await env.wiki.edit(from, 'Cached, then moved.');
    const oldUrl = `${cache}/wiki.test/v1/page/${from}/html`;
    assert.equal((await request(oldUrl)).status, 200);
    assert.ok(hit(await request(oldUrl)));
    await env.wiki.move(from, to, { noredirect: true });
    await within3s('the old title purged', oldUrl, (res) => res.status === 404);
    const moved = await within3s('the new title through Varnish', `${cache}/wiki.test/v1/page/${to}/html`, (res) => res.status === 200);
    assert.match(moved.text, /Cached, then moved/);
  });

  it('re-renders and purges a cached page whose template changed', async () => {
    const template = `Template:Cache box ${RUN}`;
    await env.wiki.edit(template, 'Old box.');
    const title = `Cache templated ${RUN}`.replace(/ /g, '_');
    await env.wiki.edit(title, `Uses {{Cache box ${RUN}}}.`);
    const url = `${cache}/wiki.test/v1/page/${title}/html`;
    await waitFor('the page stored with its template', 3000, async () => ((await request(url)).status === 200 ? true : undefined));
    assert.match((await request(url)).text, /Old box/);
    assert.ok(hit(await request(url)), 'cached');
    await env.wiki.edit(template, 'New box.');
    await waitFor('the new template through Varnish', 5000, async () => (/New box/.test((await request(url)).text) ? true : undefined));
  });

  // Every URL form a client may cache a page under, through a real Varnish with xkey.

  /** The latest forms of a title, and the forms of one revision and render, on both surfaces and in other spellings. */
  const latestForms = (title: string) => {
    const t = canonical(title);
    // Other spellings of the same title: escaped parentheses, a raw comma, a lower-case first letter.
    const raw = t.replace(/\(/g, '%28').replace(/\)/g, '%29').replace(/%2C/g, ',');
    return [
      `/wiki.test/v1/page/${t}/html`, `/wiki.test/v1/page/${t}/html?data-mw=inline`, `/wiki.test/v1/page/${t}/wikitext`,
      `/wiki.test/v1/page/${raw}/html`, `/wiki.test/v1/page/${t[0]!.toLowerCase()}${t.slice(1)}/html`,
      `/wiki.test/rest_v1/page/html/${t}`, `/wiki.test/rest_v1/page/html/${t}?redirect=false`, `/wiki.test/rest_v1/page/html/${raw}?redirect=false`,
      `/wiki.test/rest_v1/page/title/${t}`, `/wiki.test/rest_v1/page/summary/${t}`,
    ];
  };
  /** A title spelt as the service spells it in its URLs. */
  const canonical = (title: string) => encodeURIComponent(title).replace(/%3A/g, ':');
  const revisionForms = (title: string, rev: number, tid: string) => [canonical(title)].flatMap((t) => [
    `/wiki.test/v1/page/${t}/html/${rev}`, `/wiki.test/v1/page/${t}/html/${tid}`, `/wiki.test/v1/page/${t}/wikitext/${rev}`,
    `/wiki.test/v1/page/${t}/html/${rev}?data-mw=inline`, `/wiki.test/v1/page/${t}/data-parsoid/${tid}`,
    `/wiki.test/rest_v1/page/html/${t}/${rev}`, `/wiki.test/rest_v1/page/html/${t}/${rev}?redirect=false`,
    `/wiki.test/rest_v1/page/html/${t}/${rev}/${tid}`, `/wiki.test/rest_v1/page/data-parsoid/${t}/${rev}/${tid}`,
  ]);
  /** Reads each URL through Varnish twice (the second is the cached answer). */
  const fill = async (urls: string[]) => {
    for (const u of urls) {
      await request(`${cache}${u}`);
      await request(`${cache}${u}`);
    }
  };
  /** The URLs that still answer content matching `old` through Varnish. */
  const stale = async (urls: string[], old: RegExp) => {
    const found: string[] = [];
    for (const u of urls) {
      const res = await request(`${cache}${u}`);
      if (res.status === 200 && old.test(res.text)) found.push(`${u} (${res.headers['x-varnish']})`);
    }
    return found;
  };
  const noneWithin3s = async (what: string, urls: string[], old: RegExp) => {
    await sleep(3000);
    const left = await stale(urls, old);
    assert.deepEqual(left, [], `${what}: still served from the cache`);
  };

  it('after an edit, a hide, a move and a delete, no URL form answers the old content after 3 s', async () => {
    const title = `Cache forms (${RUN}), all`.replace(/ /g, '_');
    const rev1 = await env.wiki.edit(title, 'Secretfirst words.');
    const first = await request(`${cache}/wiki.test/v1/page/${canonical(title)}/html`);
    assert.equal(first.status, 200, first.text);
    const tid1 = etagOf(first).tid;
    await fill([...latestForms(title), ...revisionForms(title, rev1, tid1)]);
    assert.ok(hit(await request(`${cache}/wiki.test/rest_v1/page/html/${canonical(title)}?redirect=false`)), 'the form VisualEditor opens is cached');
    const spelt = await request(`${cache}/wiki.test/v1/page/${canonical(title).replace(/\(/g, '%28').replace(/\)/g, '%29')}/html`);
    assert.equal(spelt.status, 301, 'another spelling of the title is a redirect to the canonical one, not a copy');

    const rev2 = await env.wiki.edit(title, 'Publicsecond words.');
    await noneWithin3s('an edit', latestForms(title), /Secretfirst/);
    const second = await request(`${cache}/wiki.test/v1/page/${canonical(title)}/html`);
    assert.equal(etagOf(second).rev, rev2);
    await fill([...latestForms(title), ...revisionForms(title, rev2, etagOf(second).tid)]);

    await env.wiki.hideRevision(title, rev1);
    await noneWithin3s('a hidden revision', revisionForms(title, rev1, tid1), /Secretfirst/);

    const moved = `Cache forms moved ${RUN}`.replace(/ /g, '_');
    await env.wiki.move(title, moved, { noredirect: true });
    await noneWithin3s('a move', [...latestForms(title), ...revisionForms(title, rev2, etagOf(second).tid)], /Publicsecond/);
    const there = await waitFor('the moved page through Varnish', 3000, async () => {
      const res = await request(`${cache}/wiki.test/v1/page/${moved}/html`);
      return res.status === 200 ? res : undefined;
    });
    const tid2 = etagOf(there).tid;
    const byTidUrl = `${cache}/wiki.test/v1/page/${canonical(title)}/html/${etagOf(second).tid}`;
    const byTid = await request(byTidUrl);
    assert.equal(byTid.status, 302, 'the old title\'s render URL redirects');
    assert.equal((await request(new URL(String(byTid.headers.location), byTidUrl).href)).status, 200, 'to the render under the new title');
    await fill([...latestForms(moved), ...revisionForms(moved, rev2, tid2)]);

    await env.wiki.delete(moved);
    await noneWithin3s('a delete', [...latestForms(moved), ...revisionForms(moved, rev2, tid2)], /Publicsecond/);
  });
});
