import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { request, sleep, startServer, tempDir, TEST_WIKI_TIMEOUT_S, type TestServer } from '../helpers.js';
import { corpusArticles, corpusRoundTrips } from '../roundtrip.js';
import { FAST_FOLLOWER, waitFor, WIKI_URL, WikiAdmin } from '../wiki.js';

const BACKFILL = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/bin/backfill.js');

/** Runs the backfill command on a config; SIGINT (Ctrl-C) once its progress shows pages done, if `interrupt`. */
function backfill(config: string, args: string[], interrupt = false): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BACKFILL, '--domain', 'wiki.test', ...args], { env: { ...process.env, CONFIG: config }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c));
  let interrupted = false;
  child.stderr.on('data', (c: Buffer) => {
    stderr += c;
    if (interrupt && !interrupted && / [1-9]\d*\/\d+ pages \| /.test(stderr)) {
      interrupted = true;
      child.kill('SIGINT');
    }
  });
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

function configIn(dir: string): string {
  const file = path.join(dir, 'config.yaml');
  fs.writeFileSync(
    file,
    `storage:\n  backend: sqlite\n  path: ${JSON.stringify(path.join(dir, 'store.sqlite3'))}\n` +
      `wikis:\n  wiki.test:\n    action_api: ${WIKI_URL}/api.php\n    rest_api: ${WIKI_URL}/rest.php\n    timeout: ${TEST_WIKI_TIMEOUT_S}\nlog_level: warn\n`,
  );
  return file;
}

/** The wiki's pages of one namespace, as the service stores their titles. */
async function wikiTitles(namespace: number): Promise<string[]> {
  const titles: string[] = [];
  let cont: Record<string, string> = {};
  for (;;) {
    const qs = new URLSearchParams({ action: 'query', list: 'allpages', apnamespace: String(namespace), aplimit: 'max', format: 'json', formatversion: '2', ...cont });
    const json: any = await (await fetch(`${WIKI_URL}/api.php?${qs}`)).json();
    titles.push(...json.query.allpages.map((p: { title: string }) => p.title.replace(/ /g, '_')));
    if (!json.continue) return titles;
    cont = json.continue;
  }
}

/** The main-namespace pages the wiki's recent changes show changed since `since`, as the service stores their titles. */
async function changedSince(since: Date): Promise<Set<string>> {
  const titles = new Set<string>();
  let cont: Record<string, string> = {};
  for (;;) {
    const qs = new URLSearchParams({ action: 'query', list: 'recentchanges', rcnamespace: '0', rcend: since.toISOString(), rcprop: 'title', rclimit: 'max', format: 'json', formatversion: '2', ...cont });
    const json: any = await (await fetch(`${WIKI_URL}/api.php?${qs}`)).json();
    for (const c of json.query.recentchanges as { title: string }[]) titles.add(c.title.replace(/ /g, '_'));
    if (!json.continue) return titles;
    cont = json.continue;
  }
}

const summary = (stdout: string) => {
  const m = /rendered (\d+), skipped (\d+) \(already stored\), failed (\d+)/.exec(stdout);
  assert.ok(m, stdout);
  return { rendered: Number(m[1]), skipped: Number(m[2]), failed: Number(m[3]) };
};

describe('the backfill command on the whole test wiki', () => {
  const dir = tempDir('wikistore-backfill-');
  const config = configIn(dir);
  let service: TestServer | undefined;
  /** The pages the first run left stored. */
  let storedFirst = new Set<string>();
  /** When the first run began: pages other files edited since are rendered anew by the second. */
  let firstRunAt = new Date();
  after(() => service?.close());

  it('stores and renders every content page, showing progress and a summary; the listing is then complete', async () => {
    // A service following the wiki on the same storage, started first: with the backfill, the
    // page listing becomes complete.
    service = await startServer({
      storage: { backend: 'sqlite', path: path.join(dir, 'store.sqlite3') },
      wikis: { 'wiki.test': { action_api: `${WIKI_URL}/api.php`, rest_api: `${WIKI_URL}/rest.php` } },
      ...FAST_FOLLOWER,
    });
    const base = service.base;
    await waitFor('the follower leads', 10_000, async () => (/^follower_leading\{domain="wiki.test"\} 1$/m.test((await request(`${base}/metrics`)).text) ? true : undefined));
    assert.equal((await request(`${base}/wiki.test/v1/page/`)).json.complete, false, 'nothing stored yet: not complete');

    // Other test files create and delete pages of their own on the same wiki meanwhile: what is
    // checked is every page that was there before the run and is still there after it.
    const startedAt = (firstRunAt = new Date());
    const expected = await wikiTitles(0);
    // Twice the default concurrency: this file is the suite's longest, and the wiki's workers serve
    // whoever asks most; the other files have time to spare.
    const run = await backfill(config, ['--all', '--concurrency', '8']);
    const now = new Set(await wikiTitles(0));
    const stayed = expected.filter((t) => now.has(t));
    const failedTitles = [...run.stdout.matchAll(/failed \d+× .* \((.*)\)$/gm)].flatMap((m) => m[1]!.split(', '));
    // Another file may delete its page meanwhile, or hide the revision the backfill was about to
    // render (a revision deletion is in the recent changes as a log entry).
    const touched = await changedSince(startedAt);
    const unexplained = failedTitles.map((t) => t.replace(/ /g, '_')).filter((t) => now.has(t) && !touched.has(t));
    assert.deepEqual(unexplained, [], 'a page fails only if another test deleted it or hid its revision during the run');
    assert.equal(run.code, failedTitles.length > 0 ? 1 : 0, run.stdout + run.stderr.slice(-2000));
    const totals = [...run.stderr.matchAll(/\d+\/(\d+) pages \| [\d.]+ pages\/s \| ETA/g)].map((m) => Number(m[1]));
    assert.ok(totals.length > 0, 'a progress bar with the total, the rate and an ETA');
    const counts = summary(run.stdout);
    assert.equal(counts.rendered + counts.skipped + counts.failed, totals.at(-1), 'every page of the total accounted for');
    assert.ok(totals.at(-1)! >= stayed.length, `the total (${totals.at(-1)}) covers the ${stayed.length} pages there throughout`);
    // The follower may have stored pages first: changes of the moments before it began, and pages
    // other test files edited meanwhile. Nothing else is skipped.
    const changed = (await changedSince(startedAt)).size;
    assert.ok(counts.skipped <= changed + 10, `skipped ${counts.skipped}, ${changed} pages changed meanwhile: ${run.stdout}`);
    // What it cost the wiki: each page's render from Parsoid, its wikitext and state asked of the
    // Action API for a chunk of pages at once (a page asked alone where the wiki cut an answer short).
    const asked = /asked the wiki (\d+) times \((.*)\)/.exec(run.stdout);
    assert.ok(asked, run.stdout);
    console.log(`# ${counts.rendered} pages rendered; ${asked[0]}`);
    const byEndpoint = Object.fromEntries(asked[2]!.split(', ').map((e) => [e.split(' ')[0], Number(e.split(' ')[1])]));
    assert.ok(byEndpoint.parsoid! < counts.rendered * 1.2, `one Parsoid request a page rendered: ${run.stdout}`);
    assert.ok(byEndpoint.action! < counts.rendered / 10, `the Action API asked about chunks of pages, not each page: ${run.stdout}`);
    // Each render's Enterprise facts (lists, editor, parent), asked in batches of up to 50 pages.
    assert.ok((byEndpoint['action-facts'] ?? 0) < counts.rendered / 10, `the pages' facts asked in batches, not a page at a time: ${run.stdout}`);

    // Every page is listed from what was stored, with a render.
    const listed = new Map<string, string | null>();
    let next: string | undefined;
    let complete: boolean | undefined;
    do {
      const res = await request(`${base}/wiki.test/v1/page/?limit=500${next ? `&next=${encodeURIComponent(next)}` : ''}`);
      assert.equal(res.status, 200, res.text);
      for (const item of res.json.items as { title: string; tid: string | null }[]) listed.set(item.title, item.tid);
      next = res.json.next;
      complete = res.json.complete;
    } while (next);
    storedFirst = new Set(listed.keys());
    const missing = stayed.filter((t) => !listed.has(t));
    assert.deepEqual(missing, [], 'every page stored');
    // Pages other files made meanwhile may be listed unrendered (a revision they hid, a page the follower met first).
    assert.deepEqual(stayed.filter((t) => !listed.get(t)), [], 'and rendered');
    assert.equal(complete, true, 'the listing says it is complete');
    assert.equal((await request(`${base}/wiki.test/v1/page/?ts=2001-01-15T00:00:00Z`)).json.complete, false, 'but not as of a time before following began');
    // A page read is the render the backfill stored (the follower's own renders of pages other
    // files edit meanwhile make the wiki request count move, so it is not what is compared).
    const first = stayed[0]!;
    const page = await request(`${base}/wiki.test/v1/page/${encodeURIComponent(first)}/html`);
    assert.equal(page.status, 200);
    assert.equal(/\/([0-9a-f-]{36})"$/.exec(String(page.headers.etag))?.[1], listed.get(first), 'served from storage: the render stored');
  });

  it('skips every stored page on a second run', async () => {
    const before = await wikiTitles(0);
    const run = await backfill(config, ['--all']);
    const after = await wikiTitles(0);
    const counts = summary(run.stdout);
    // Only pages other test files made or edited since the first run are new to it.
    const changed = await changedSince(firstRunAt);
    const notStored = new Set([...[...before, ...after].filter((t) => !storedFirst.has(t)), ...changed]);
    assert.ok(counts.rendered <= notStored.size, `rendered ${counts.rendered}, of ${notStored.size} pages made or edited since: ${run.stdout}`);
    assert.ok(counts.failed <= notStored.size, run.stdout);
    // Every page stored by the first run, still there and unchanged since, is skipped.
    const unchanged = [...storedFirst].filter((t) => after.includes(t) && !changed.has(t));
    assert.ok(counts.skipped > 1000 && counts.skipped >= unchanged.length - counts.failed, `skipped ${counts.skipped} of ${unchanged.length} unchanged: ${run.stdout}`);
  });

  // The editors' promise over the corpus (what the editor did not touch stays byte for byte), on
  // the renders the backfill stored: each article's render is Parsoid's work either way, and the
  // whole corpus rendered once instead of twice is minutes of the wiki's two cores in every run.
  // Both surfaces at once, as many requests in flight as the backfill: this file is the suite's
  // longest, so its share of the wiki's workers decides when the suite ends.
  describe("then the editors' round trip over every corpus article (rest_v1 as VisualEditor, and /v1/)", { concurrency: 2 }, () => {
    let titles: string[] = [];
    let admin: WikiAdmin;
    const wikitexts = new Map<number, Promise<string>>();
    const wikitextOf = (rev: number) => {
      if (!wikitexts.has(rev)) wikitexts.set(rev, admin.wikitext(rev));
      return wikitexts.get(rev)!;
    };
    before(async () => {
      admin = await new WikiAdmin().login();
      titles = await corpusArticles();
    });
    corpusRoundTrips(() => service!.base, () => titles, wikitextOf, 4);
  });

  // Enterprise's records of every corpus article, from what the backfill stored (each render's
  // body and abstract made as it was stored, the pages' facts asked of the wiki in batches then).
  describe('then the Enterprise record of every corpus article', () => {
    let titles: string[] = [];
    before(async () => {
      titles = await corpusArticles();
    });

    it("lists each article's categories and templates as the wiki does, and its render's headings as sections in order", async () => {
      const base = `${service!.base}/wiki.test/enterprise/v2`;
      const mismatched: string[] = [];
      for (let i = 0; i < titles.length; i += 50) {
        const batch = titles.slice(i, i + 50);
        const wiki = await wikiListsOf(batch);
        await Promise.all(batch.map(async (title) => {
          const res = await request(`${base}/articles/${encodeURIComponent(title)}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: { fields: ['name', 'categories.name', 'templates.name', 'abstract', 'article_body.html'] } });
          assert.equal(res.status, 200, `${title}: ${res.text.slice(0, 300)}`);
          const record = res.json[0];
          const lists = wiki.get(title.replace(/_/g, ' '))!;
          const names = (list: { name: string }[]) => list.map((c) => c.name).sort();
          if (JSON.stringify(names(record.categories)) !== JSON.stringify(lists.categories) || JSON.stringify(names(record.templates)) !== JSON.stringify(lists.templates)) mismatched.push(title);
          assert.equal(typeof record.abstract, 'string');
          // The render's headings, read from its HTML here, against the structured record's sections.
          const headings = [...(record.article_body.html as string).matchAll(/<section[^>]*><h([1-6])[^>]*>([\s\S]*?)<\/h\1>/g)].map((m) => decodeEntities(m[2]!.replace(/<sup[^>]*class="[^"]*mw-ref[^"]*"[^>]*>[\s\S]*?<\/sup>/g, '').replace(/<[^>]+>/g, '')).replace(/\s+/g, ' ').trim());
          const structured = await request(`${base}/structured-contents/${encodeURIComponent(title)}`);
          assert.equal(structured.status, 200, `${title}: ${structured.text.slice(0, 300)}`);
          const sections: string[] = [];
          const walk = (parts: { type: string; name?: string; has_parts?: unknown[] }[]) => parts.forEach((p) => p.type === 'section' && (sections.push(p.name!), walk(p.has_parts as never)));
          walk(structured.json[0].sections);
          assert.deepEqual(sections.filter((_, i) => i > 0 || sections[0] !== 'Abstract'), headings, `${title}: sections against the render's headings`);
        }));
      }
      assert.deepEqual(mismatched, [], 'articles whose categories or templates differ from the wiki\'s lists');
    });
  });
});

/** The wiki's category and template lists of up to 50 pages, followed to their end, by title. */
async function wikiListsOf(titles: string[]): Promise<Map<string, { categories: string[]; templates: string[] }>> {
  const lists = new Map<string, { categories: string[]; templates: string[] }>();
  let cont: Record<string, string> = { continue: '' };
  for (;;) {
    const qs = new URLSearchParams({ action: 'query', format: 'json', formatversion: '2', titles: titles.join('|'), prop: 'categories|templates', cllimit: 'max', tllimit: 'max', ...cont });
    const json = (await (await fetch(`${WIKI_URL}/api.php`, { method: 'POST', body: qs })).json()) as { query: { pages: { title: string; categories?: { title: string }[]; templates?: { title: string }[] }[] }; continue?: Record<string, string> };
    for (const page of json.query.pages) {
      const entry = lists.get(page.title) ?? { categories: [], templates: [] };
      entry.categories.push(...(page.categories ?? []).map((c) => c.title));
      entry.templates.push(...(page.templates ?? []).map((t) => t.title));
      lists.set(page.title, entry);
    }
    if (!json.continue) break;
    cont = json.continue;
  }
  for (const entry of lists.values()) {
    entry.categories.sort();
    entry.templates.sort();
  }
  return lists;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", nbsp: '\u00a0' };
const decodeEntities = (text: string) => text.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (whole, name: string) => {
  if (name.startsWith('#x')) return String.fromCodePoint(parseInt(name.slice(2), 16));
  if (name.startsWith('#')) return String.fromCodePoint(Number(name.slice(1)));
  return ENTITIES[name] ?? whole;
});

describe('the backfill command, stopped with Ctrl-C', () => {
  const dir = tempDir('wikistore-backfill-');
  const config = configIn(dir);
  let titles: string[];
  before(async () => {
    titles = (await wikiTitles(0)).slice(0, 120);
    fs.writeFileSync(path.join(dir, 'titles.txt'), `${titles.join('\n')}\nNo such page anywhere\n`);
  });

  it('goes on where it stopped, and names the pages it could not store and why', async () => {
    const file = path.join(dir, 'titles.txt');
    const first = await backfill(config, ['--titles-from', file, '--concurrency', '2'], true);
    assert.equal(first.code, 130, first.stdout + first.stderr.slice(-1000));
    assert.match(first.stdout, /^Stopped: \d+ pages/m);
    const before = summary(first.stdout);
    assert.ok(before.rendered >= 50 && before.rendered < 121, first.stdout);
    await sleep(10);
    const second = await backfill(config, ['--titles-from', file]);
    assert.match(second.stdout, /Done \(resumed an earlier run\)/, second.stderr.slice(-2000));
    const after = summary(second.stdout);
    assert.equal(before.rendered + after.rendered + after.skipped, 120, `${first.stdout}\n${second.stdout}`);
    assert.ok(after.skipped < 50, 'the stopped run\'s chunks are not gone through again');
    assert.equal(after.failed, 1);
    assert.match(second.stdout, /failed 1× 404 urn:problem:page-not-found: the wiki has no such page \(No such page anywhere\)/);
    assert.equal(second.code, 1, 'a run with failures says so');
  });
});
