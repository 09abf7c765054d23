import { parseDocument } from 'htmlparser2';
import type { ChildNode, Element } from 'domhandler';
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { request } from './helpers.js';
import { WIKI_URL } from './wiki.js';

/** What VisualEditor asks for: HTML 2.x (it names 2.4.0; 2.x minors are compatible). */
export const VE_ACCEPT = 'text/html; charset=utf-8; profile="https://www.mediawiki.org/wiki/Specs/HTML/2.4.0"';
export const EDIT_WORD = 'Zqxedit';

const isElement = (node: ChildNode): node is Element => node.type === 'tag';

/**
 * Where to put a word at the end of the page's first paragraph that the editor could type in: a
 * `<p>` with text of its own, in a section, with no template, extension or other generated
 * content around it (those are not editable as text). Its `</p>` offset in the HTML.
 */
export function firstParagraphEnd(html: string): number | undefined {
  const doc = parseDocument(html, { withStartIndices: true, withEndIndices: true });
  const walk = (nodes: ChildNode[]): number | undefined => {
    for (const node of nodes) {
      if (!isElement(node)) continue;
      if (node.name !== 'html' && (node.attribs.typeof || node.attribs.about)) continue;
      if (node.name === 'p') {
        const text = node.children.filter((c) => c.type === 'text').map((c) => (c as unknown as { data: string }).data).join('');
        if (/\p{L}{3}/u.test(text) && node.endIndex !== null) return node.endIndex - 3;
        continue;
      }
      if (['section', 'body', 'html', 'div'].includes(node.name)) {
        const found = walk(node.children);
        if (found !== undefined) return found;
      }
    }
    return undefined;
  };
  return walk(doc.children);
}

/** The edited HTML: one word added at the end of the first editable paragraph, or undefined if it has none. */
export function addWord(html: string): string | undefined {
  const at = firstParagraphEnd(html);
  return at === undefined ? undefined : `${html.slice(0, at)} ${EDIT_WORD}${html.slice(at)}`;
}

/** Whether `edited` is `original` with exactly one line changed, and that line holds the word. */
export function oneLineChanged(original: string, edited: string): boolean {
  const a = original.split('\n');
  const b = edited.split('\n');
  if (a.length !== b.length) return false;
  const changed = a.map((line, i) => (line === b[i] ? -1 : i)).filter((i) => i >= 0);
  return changed.length === 1 && b[changed[0]!]!.includes(EDIT_WORD);
}

export interface RoundTrip {
  title: string;
  /** The unchanged HTML gave back the revision's exact wikitext. */
  exact: boolean;
  /** The one-word edit changed exactly one line (undefined: the page has no editable paragraph). */
  minimal?: boolean;
  error?: string;
}

const multipart = (fields: Record<string, string>) => {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  return form;
};

/** A transform of HTML to wikitext as a client posts it: multipart, If-Match the ETag of what it read. */
async function toWikitext(url: string, html: string, etag: string, surface: 'rest_v1' | 'v1'): Promise<{ status: number; text: string }> {
  // rest_v1 names the render by If-Match, as RESTBase's clients do; /v1/ by its tid field.
  const tid = /\/([0-9a-f-]{36})"$/.exec(etag)![1]!;
  const res = surface === 'rest_v1'
    ? await fetch(url, { method: 'POST', headers: { 'if-match': etag }, body: multipart({ html }) })
    : await fetch(url, { method: 'POST', body: multipart({ html, tid }) });
  return { status: res.status, text: await res.text() };
}

/**
 * The editors' round trip of one page through a surface, as its clients do it:
 * rest_v1 (VisualEditor: 2.x HTML with data-mw inline, `stash=true`, the transform with
 * If-Match) or /v1/ (the stored 999.x HTML, data-mw apart, the transform naming the render).
 */
export async function roundTrip(base: string, domain: string, title: string, wikitextOf: (rev: number) => Promise<string>, surface: 'rest_v1' | 'v1'): Promise<RoundTrip> {
  const t = encodeURIComponent(title);
  const read = surface === 'rest_v1'
    ? await request(`${base}/${domain}/rest_v1/page/html/${t}?redirect=false&stash=true`, { headers: { accept: VE_ACCEPT } })
    : await request(`${base}/${domain}/v1/page/${t}/html`);
  if (read.status !== 200) return { title, exact: false, error: `read ${read.status}: ${read.text.slice(0, 200)}` };
  const etag = String(read.headers.etag);
  const rev = Number(/^(?:W\/)?"(\d+)\//.exec(etag)?.[1]);
  const transform = surface === 'rest_v1' ? `${base}/${domain}/rest_v1/transform/html/to/wikitext/${t}/${rev}` : `${base}/${domain}/v1/transform/html/to/wikitext/${t}/${rev}`;
  const original = await wikitextOf(rev);
  const noop = await toWikitext(transform, read.text, etag, surface);
  if (noop.status !== 200) return { title, exact: false, error: `no-op ${noop.status}: ${noop.text.slice(0, 300)}` };
  const result: RoundTrip = { title, exact: noop.text === original };
  const edited = addWord(read.text);
  if (edited !== undefined) {
    const edit = await toWikitext(transform, edited, etag, surface);
    result.minimal = edit.status === 200 && oneLineChanged(original, edit.text);
    if (edit.status !== 200) result.error = `edit ${edit.status}: ${edit.text.slice(0, 300)}`;
  }
  return result;
}

/**
 * The editors' promise over the corpus: what the editor did not touch stays byte for byte.
 * Every article imported into the test wiki (or an even spread of `WIKISTORE_ROUNDTRIP_PAGES` of
 * them) goes through the round trip both surfaces' clients make.
 */
export async function corpusArticles(): Promise<string[]> {
  const titles: string[] = [];
  let cont: Record<string, string> = {};
  for (;;) {
    const qs = new URLSearchParams({ action: 'query', format: 'json', formatversion: '2', generator: 'allpages', gapnamespace: '0', gaplimit: '500', gapfilterredir: 'nonredirects', prop: 'revisions', rvprop: 'user', ...cont });
    const json = (await (await fetch(`${WIKI_URL}/api.php?${qs}`)).json()) as { query?: { pages: { title: string; revisions?: { user: string }[] }[] }; continue?: Record<string, string> };
    // Only pages as the corpus left them: tests edit and create pages of their own.
    for (const p of json.query?.pages ?? []) if (p.revisions?.[0]?.user.startsWith('imported>')) titles.push(p.title.replace(/ /g, '_'));
    if (!json.continue) break;
    cont = json.continue;
  }
  titles.sort();
  const limit = Number(process.env.WIKISTORE_ROUNDTRIP_PAGES ?? 0);
  if (!limit || limit >= titles.length) return titles;
  return Array.from({ length: limit }, (_, i) => titles[Math.floor((i * titles.length) / limit)]!);
}

/** Runs `work` over `items`, `concurrency` at a time. */
async function pool<T, R>(items: T[], concurrency: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]!);
    }
  }));
  return results;
}

function report(surface: string, results: RoundTrip[]): { exact: number; edited: number; minimal: number } {
  const exact = results.filter((r) => r.exact).length;
  const edited = results.filter((r) => r.minimal !== undefined);
  const minimal = edited.filter((r) => r.minimal).length;
  console.log(`# ${surface}: no-op exact ${exact}/${results.length}; one-word edit minimal ${minimal}/${edited.length}`);
  for (const r of results.filter((r) => !r.exact || r.minimal === false).slice(0, 10)) console.log(`#   ${r.title}: exact=${r.exact} minimal=${r.minimal} ${r.error ?? ''}`);
  return { exact, edited: edited.length, minimal };
}

/**
 * The round trip over every corpus article (`titles`), through both surfaces of the service at
 * `base()`: declared as two tests of the calling suite, run on whatever renders its store holds;
 * `concurrency` articles at a time each.
 */
export function corpusRoundTrips(base: () => string, titles: () => string[], wikitextOf: (rev: number) => Promise<string>, concurrency = 3): void {
  for (const surface of ['rest_v1', 'v1'] as const) {
    it(`${surface}: the unchanged HTML gives back the exact wikitext of every article, and a one-word edit changes one line of at least 97%`, async () => {
      const all = titles();
      assert.ok(all.length >= Math.min(50, Number(process.env.WIKISTORE_ROUNDTRIP_PAGES || 50)), `corpus articles found: ${all.length}`);
      const results = await pool(all, concurrency, (title) => roundTrip(base(), 'wiki.test', title, wikitextOf, surface));
      const { exact, edited, minimal } = report(surface, results);
      assert.equal(exact, results.length, 'every no-op round trip is exact');
      assert.ok(edited >= all.length / 2, `most articles have a paragraph to edit (${edited})`);
      assert.ok(minimal >= Math.ceil(edited * 0.97), `${minimal} of ${edited} edits changed only their line`);
    });
  }
}
