import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SnapshotWriter, type SnapshotOptions } from '../../src/modules/page/snapshot/snapshot-writer.js';
import type { RecordFormatter } from '../../src/modules/page/snapshot/record-formatter.js';
import { workerFormatter } from '../../src/modules/page/thread/page-thread.js';
import type { RequestContext } from '../../src/router/types.js';
import { BACKENDS, processConfig, request, sleep, tempDir } from '../helpers.js';
import { tarEntries } from '../tar-entries.js';
import { startAgainstWiki, waitFor, WIKI_URL, type AgainstWiki } from '../wiki.js';

const RUN = Date.now().toString(36);

/** The NDJSON records of a snapshot's archive, by chunk file name. */
async function readArchive(file: string): Promise<Map<string, Record<string, any>[]>> {
  return new Map((await tarEntries(file)).map((e) => [e.name, e.text.split('\n').filter(Boolean).map((l) => JSON.parse(l))]));
}

const records = async (out: string) => [...(await readArchive(path.join(out, fs.readdirSync(out).find((f) => f.endsWith('.tar.gz'))!))).values()].flat();

/**
 * Snapshots against the real wiki: the wiki as it was at T (pages edited, deleted, hidden and
 * created after T as they were then), in Wikimedia Enterprise's layout, resumable to the same
 * bytes, and incremental.
 */
for (const backend of BACKENDS) describe(`snapshots of the wiki at a moment (${backend.name})`, () => {
  const PREFIX = `Snapshot_${RUN}_${backend.name}_`;
  let a: AgainstWiki;
  let ctx: RequestContext;
  let t0: number;
  let t1: number;
  const title = (name: string) => `${PREFIX}${name}`;
  const snapshot = (out: string, more: Partial<SnapshotOptions> = {}, formatter?: RecordFormatter) =>
    new SnapshotWriter(a.s.app.page.service, 'wiki.test', formatter).run(ctx, { at: t1, namespaces: [0], prefix: PREFIX, out, pagesPerChunk: 2, concurrency: 2, ...more });

  before(async () => {
    a = await startAgainstWiki({ storage: backend.storage() });
    ctx = a.s.app.router.context({ requestId: 'snapshot-test', admin: true, log: a.s.app.log });
    // Before t0: Edited, Deleted, Hidden exist. Between t0 and t1: Edited edited, Added created.
    await a.wiki.edit(title('Edited'), 'Edited, as it was first.');
    await a.wiki.edit(title('Deleted'), 'Deleted later.');
    await a.wiki.edit(title('Hidden'), 'Hidden later.');
    await a.wiki.edit(title('Steady'), 'Never changes.');
    await a.wiki.edit(title('Moved'), 'Moved later, under its first title at t1.');
    await a.wiki.edit(title('Restored'), 'Deleted between t0 and t1, restored after t1.');
    await a.wiki.edit(title('Vanished'), 'Never read through the service, deleted after t1.');
    await sleep(1100);
    t0 = Date.now();
    await sleep(1100);
    await a.wiki.edit(title('Edited'), 'Edited, as it was at t1.');
    await a.wiki.edit(title('Added'), 'Added between t0 and t1.');
    await a.wiki.delete(title('Restored'));
    await sleep(1100);
    t1 = Date.now();
    await sleep(1100);
    // After t1: what the snapshot at t1 must not show. The page deleted was read through the
    // service before (stored, as the pages a service serves are); the revision current at t1 is
    // hidden once a later one is made (the current revision's text cannot be hidden).
    assert.equal((await request(`${a.v1}/page/${encodeURIComponent(title('Deleted'))}/html`)).status, 200);
    await a.wiki.edit(title('Edited'), 'Edited after t1.');
    await a.wiki.edit(title('Late'), 'Created after t1.');
    await a.wiki.delete(title('Deleted'));
    await a.wiki.move(title('Moved'), title('Renamed'));
    // The wiki's listing shows a page restored as if never deleted, and a page deleted not at all.
    await a.wiki.undelete(title('Restored'));
    await a.wiki.delete(title('Vanished'));
    const hidden = await a.wiki.latestRevid(title('Hidden'));
    await a.wiki.edit(title('Hidden'), 'Hidden: a later revision.');
    await a.wiki.hideRevision(title('Hidden'), hidden);
    const shown = await fetch(`${WIKI_URL}/api.php?action=query&prop=revisions&revids=${hidden}&rvslots=main&rvprop=content&format=json&formatversion=2`);
    assert.match(await shown.text(), /texthidden/, 'the revision current at t1 is hidden');
  });
  after(() => a.close());

  it('holds each page as it was at t1, in Enterprise\'s fields, hidden text left out, with a manifest', async () => {
    const out = tempDir('wikistore-snapshot-');
    const report = await snapshot(out);
    assert.equal(report.complete, true);
    const pages = new Map((await records(out)).map((r) => [r.name.replace(/ /g, '_'), r]));
    // The page moved after t1 is there under its title then, as it was then.
    assert.deepEqual([...pages.keys()].sort(), [title('Added'), title('Deleted'), title('Edited'), title('Moved'), title('Steady')]);
    assert.match(pages.get(title('Moved'))!.article_body.wikitext, /under its first title at t1/);
    assert.ok(pages.get(title('Moved'))!.url.endsWith(`/index.php/${title('Moved')}`));
    const edited = pages.get(title('Edited'))!;
    assert.match(edited.article_body.wikitext, /as it was at t1/);
    assert.match(edited.article_body.html, /as it was at t1/);
    assert.equal(typeof edited.identifier, 'number');
    assert.equal(typeof edited.version.identifier, 'number');
    assert.equal(edited.namespace.identifier, 0);
    assert.equal(edited.in_language.identifier, 'en');
    assert.ok(edited.url.endsWith(`/index.php/${title('Edited')}`));
    assert.ok(edited.is_part_of.identifier);
    assert.ok(Date.parse(edited.date_modified) <= t1);
    const manifest = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8'));
    assert.equal(manifest.date_modified, new Date(t1).toISOString());
    assert.equal(manifest.counts.written, 5);
    assert.equal(manifest.counts.hidden, 1, 'the revision hidden after t1 is left out');
    assert.equal(manifest.counts.absent, 3, 'the page created after t1 is not there, nor the redirect the move left, nor the page deleted at t1 and restored since');
    // Deleted since t1 and never stored here: what it held at t1 is not known, and the manifest says so.
    assert.deepEqual(manifest.lacking.map((l: { title: string }) => l.title), [title('Vanished')]);
    assert.equal(manifest.counts.lacking, 1);
    assert.match(manifest.files[0].sha256, /^[0-9a-f]{64}$/);
    // Each page's body is made from its render once, and kept: the next snapshot copies it, to the
    // same bytes. A page's latest render has its body made as it is stored (Steady and Added,
    // rendered by this snapshot, and Deleted, read before its deletion); the revisions current at
    // t1 that no longer were (Edited, edited since; Moved, whose move added a revision) had theirs
    // made by this snapshot.
    assert.deepEqual(report.bodies, { made: 2, stored: 3 });
    const again = tempDir('wikistore-snapshot-');
    const second = await snapshot(again);
    assert.deepEqual(second.bodies, { made: 0, stored: 5 });
    assert.deepEqual(fs.readFileSync(path.join(again, manifest.files[0].name)), fs.readFileSync(path.join(out, manifest.files[0].name)));
  });

  it('resumed after a stop, writes the same bytes as a run that was not stopped (made on worker threads)', async () => {
    const whole = tempDir('wikistore-snapshot-');
    const workers = workerFormatter(2);
    try {
      await snapshot(whole, {}, workers);
    } finally {
      await workers.close();
    }
    const stopped = tempDir('wikistore-snapshot-');
    let chunks = 0;
    const first = await snapshot(stopped, { stopped: () => chunks++ >= 1 });
    assert.equal(first.complete, false);
    const second = await snapshot(stopped);
    assert.equal(second.complete, true);
    assert.equal(second.resumed, true);
    const archive = fs.readdirSync(whole).find((f) => f.endsWith('.tar.gz'))!;
    assert.deepEqual(fs.readFileSync(path.join(stopped, archive)), fs.readFileSync(path.join(whole, archive)));
    await assert.rejects(snapshot(stopped, { at: t0 }), /other options/, 'a folder holds one snapshot');
  });

  it('from storage alone, holds the same pages as the wiki\'s listing gave, asking the wiki nothing', async () => {
    const listed = tempDir('wikistore-snapshot-');
    await snapshot(listed);
    const alone = tempDir('wikistore-snapshot-');
    const before = a.wikiRequests();
    const report = await snapshot(alone, { storageOnly: true });
    assert.equal(a.wikiRequests() - before, 0, 'no request to the wiki');
    assert.equal((report.manifest as { source: string }).source, 'storage');
    const byName = async (out: string) => new Map((await records(out)).map((r) => [r.name as string, { html: r.article_body.html, wikitext: r.article_body.wikitext, rev: r.version.identifier }]));
    // Every page stored here: what the listing's run wrote (the page created after t1 was never read,
    // so not stored), the page moved since under the title it is stored under (the move log is the wiki's).
    const fromStorage = await byName(alone);
    const fromListing = await byName(listed);
    assert.deepEqual(fromStorage.get(title('Renamed').replace(/_/g, ' ')), fromListing.get(title('Moved').replace(/_/g, ' ')));
    for (const map of [fromStorage, fromListing]) for (const name of ['Moved', 'Renamed']) map.delete(title(name).replace(/_/g, ' '));
    assert.deepEqual(fromStorage, fromListing);
  });

  it('since t0, holds only what changed between t0 and t1; applied to the snapshot at t0 it gives the one at t1', async () => {
    const atT0 = tempDir('wikistore-snapshot-');
    await snapshot(atT0, { at: t0 });
    const diff = tempDir('wikistore-snapshot-');
    await snapshot(diff, { since: t0 });
    const changed = await records(diff);
    assert.deepEqual(changed.map((r) => r.name.replace(/ /g, '_')).sort(), [title('Added'), title('Edited')]);
    const manifest = JSON.parse(fs.readFileSync(path.join(diff, 'manifest.json'), 'utf8'));
    // Deleted between t0 and t1 (restored since, which the snapshot at t1 does not know of yet).
    assert.deepEqual(manifest.deleted, [title('Restored')]);
    const mirror = new Map((await records(atT0)).map((r) => [r.identifier, r]));
    for (const r of changed) mirror.set(r.identifier, r);
    for (const [id, r] of mirror) if (manifest.deleted.includes(r.name.replace(/ /g, '_'))) mirror.delete(id);
    const full = tempDir('wikistore-snapshot-');
    await snapshot(full);
    const expected = new Map((await records(full)).map((r) => [r.identifier, r]));
    const strip = (r: Record<string, any>) => ({ ...r, event: undefined });
    assert.deepEqual(new Map([...mirror].map(([k, v]) => [k, strip(v)])), new Map([...expected].map(([k, v]) => [k, strip(v)])));
  });

  it('serves the same lines over HTTP, a page at a time, the next cursor pinning the moment', async () => {
    const out = tempDir('wikistore-snapshot-');
    await snapshot(out);
    const written = await records(out);
    const expected = written.map((r) => r.name).sort();
    const names: string[] = [];
    const lines = new Map<string, unknown>();
    let url: string | undefined = `${a.v1}/snapshot/?ts=${encodeURIComponent(new Date(t1).toISOString())}&prefix=${PREFIX}&limit=2`;
    for (let pages = 0; url && pages < 10; pages++) {
      const res = await request(url);
      assert.equal(res.status, 200, res.text);
      assert.match(String(res.headers['content-type']), /^application\/x-ndjson/);
      for (const line of res.text.split('\n').filter(Boolean)) {
        names.push(JSON.parse(line).name);
        lines.set(JSON.parse(line).name, JSON.parse(line));
      }
      const link = /<([^>]+)>; rel="next"/.exec(String(res.headers.link ?? ''));
      url = link ? new URL(link[1]!, a.s.base).href : undefined;
    }
    // The page deleted since t1 is not listed by the wiki any more: over HTTP it is left out.
    assert.deepEqual(names.sort(), expected.filter((n) => !n.endsWith('Deleted')));
    // Each line as the archive holds it (there made of stored bodies, here of the renders).
    for (const record of written) if (!record.name.endsWith('Deleted')) assert.deepEqual(lines.get(record.name), record);    // A prefix beyond Latin-1 is a title's (the wiki's legaltitlechars are over UTF-8 bytes); one no title has is a 400.
    const ltg = await request(`${a.v1}/snapshot/?limit=1&prefix=${encodeURIComponent('Daugpiļs')}`);
    assert.equal(ltg.status, 200, ltg.text);
    assert.equal(JSON.parse(ltg.text.split('\n')[0]!).name, 'Daugpiļs');
    assert.equal((await request(`${a.v1}/snapshot/?prefix=${encodeURIComponent('a|b')}`)).status, 400);
  });

  // The command itself, killed with SIGKILL while it writes: once per run, on the default engine.
  if (backend.name === BACKENDS[0]!.name) {
    it('npm run snapshot, killed with SIGKILL mid-run and run again, writes the same bytes as a run never stopped', async () => {
      // The wiki answers the command a quarter of a second late (its pages are rendered through
      // it): the run lasts long enough to be killed in its middle, whatever this machine's speed.
      const slow = http.createServer((req, res) => setTimeout(() => {
        if (res.destroyed) return;
        const upstream = http.request(`${WIKI_URL}${req.url}`, { method: req.method, headers: { ...req.headers, connection: 'close' }, agent: false }, (answer) => {
          res.writeHead(answer.statusCode!, answer.headers);
          answer.pipe(res);
        });
        upstream.on('error', () => res.destroy());
        // A client gone (the command killed) takes its wiki request with it.
        res.on('close', () => upstream.destroy());
        req.pipe(upstream);
      }, 250));
      await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
      try {
        const env = processConfig(tempDir(), 'wiki.test', `http://127.0.0.1:${(slow.address() as AddressInfo).port}`, '', backend.storage());
        const command = (out: string) => spawn(process.execPath, [path.resolve('dist/src/bin/snapshot.js'), '--domain', 'wiki.test', '--at', new Date(t1).toISOString(), '--prefix', PREFIX, '--pages', '1', '--concurrency', '1', '--out', out], {
          env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'],
        });
        const finished = (child: ReturnType<typeof command>) => new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
        const whole = tempDir('wikistore-snapshot-');
        assert.equal(await finished(command(whole)), 0);
        const killed = tempDir('wikistore-snapshot-');
        const first = command(killed);
        await waitFor('a chunk written', 60_000, async () => (fs.existsSync(path.join(killed, '.work')) && fs.readdirSync(path.join(killed, '.work')).some((f) => /^chunk-0-\d+\.meta\.json$/.test(f)) ? true : undefined));
        first.kill('SIGKILL');
        await finished(first);
        assert.ok(!fs.existsSync(path.join(killed, 'manifest.json')), 'stopped before the end');
        assert.equal(await finished(command(killed)), 0);
        const archive = fs.readdirSync(whole).find((f) => f.endsWith('.tar.gz'))!;
        assert.deepEqual(fs.readFileSync(path.join(killed, archive)), fs.readFileSync(path.join(whole, archive)));
        assert.equal(JSON.parse(fs.readFileSync(path.join(killed, 'manifest.json'), 'utf8')).files[0].sha256, JSON.parse(fs.readFileSync(path.join(whole, 'manifest.json'), 'utf8')).files[0].sha256);
      } finally {
        slow.closeAllConnections();
        await new Promise((resolve) => slow.close(resolve));
      }
    });
  }
});

/**
 * When a page's snapshot body is made (`snapshot_bodies`): by default as its latest render is
 * stored, so that a snapshot copies it (the same bytes a snapshot would make); else by the first
 * snapshot that writes it. The setting is the service's, not the engine's: on the default engine.
 */
describe('snapshot bodies made as a page\'s latest render is stored, or by the first snapshot (snapshot_bodies)', () => {
  for (const setting of ['render', 'snapshot'] as const) {
    it(`${setting}: a page read through the service, then a snapshot from storage alone`, async () => {
      const a = await startAgainstWiki({ storage: BACKENDS[0]!.storage(), snapshot_bodies: setting });
      try {
        const title = `Snapshot_bodies_${RUN}_${setting}`;
        await a.wiki.edit(title, `A page whose snapshot body is made on ${setting}, with a [[link]] and "quotes".`);
        assert.equal((await request(`${a.v1}/page/${title}/html`)).status, 200);
        await a.s.app.page.service.drain();
        const ctx = a.s.app.router.context({ requestId: 'snapshot-bodies-test', admin: true, log: a.s.app.log });
        const at = Math.floor(Date.now() / 1000) * 1000 + 1000;
        const out = tempDir('wikistore-snapshot-');
        const report = await new SnapshotWriter(a.s.app.page.service, 'wiki.test').run(ctx, { at, namespaces: [0], prefix: title, out, pagesPerChunk: 10, concurrency: 1, storageOnly: true });
        assert.deepEqual(report.bodies, setting === 'render' ? { made: 0, stored: 1 } : { made: 1, stored: 0 });
        // The line as the archive holds it is the line over HTTP (made of the stored body), and the
        // line made of the render itself once the body is gone.
        const [archived] = (await tarEntries(path.join(out, fs.readdirSync(out).find((f) => f.endsWith('.tar.gz'))!))).map((e) => e.text);
        const overHttp = async () => {
          const res = await request(`${a.v1}/snapshot/?ts=${new Date(at).toISOString()}&prefix=${title}`);
          assert.equal(res.status, 200, res.text);
          return res.text;
        };
        assert.equal(await overHttp(), archived);
        await a.s.app.storage.delete('wiki.test', { table: 'snapshot_bodies', attributes: { title } });
        assert.equal(await overHttp(), archived);
        assert.match(JSON.parse(archived!).article_body.wikitext, /with a \[\[link\]\] and "quotes"/);
      } finally {
        await a.close();
      }
    });
  }
});
