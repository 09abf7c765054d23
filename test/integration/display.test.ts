import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DomUtils, parseDocument } from 'htmlparser2';
import type { Element } from 'domhandler';
import { request } from '../helpers.js';
import { FAST_FOLLOWER, startAgainstWiki, waitFor, WIKI_URL, type AgainstWiki } from '../wiki.js';

const RUN = Date.now().toString(36);
const seg = (title: string) => encodeURIComponent(title.replace(/ /g, '_'));

/** MediaWiki's own rendering of a page (the legacy parser): its links, sections and whether it shows a TOC. */
async function mediawikiParse(title: string): Promise<{ links: { title: string; exists: boolean }[]; sections: { number: string; anchor: string; index: string }[]; showsToc: boolean; text: string }> {
  const res = await fetch(`${WIKI_URL}/api.php?action=parse&format=json&formatversion=2&prop=links|sections|text&page=${encodeURIComponent(title)}`);
  const { parse } = (await res.json()) as { parse: { links: { title: string; exists: boolean }[]; sections: { number: string; anchor: string; index: string }[]; text: string } };
  return { links: parse.links, sections: parse.sections, showsToc: parse.text.includes('id="toc"'), text: parse.text };
}

const elements = (html: string, test: (e: Element) => boolean) => DomUtils.findAll(test, parseDocument(html).children);
const classes = (e: Element) => (e.attribs.class ?? '').split(/\s+/).filter(Boolean);
const wikiLinkTo = (html: string, title: string) =>
  elements(html, (e) => e.name === 'a' && /mw:WikiLink/.test(e.attribs.rel ?? '') && decodeURIComponent((e.attribs.href ?? '').replace(/^\.\//, '').replace(/[?#].*$/, '')).replace(/_/g, ' ') === title);

describe('display HTML against the real wiki', () => {
  let env: AgainstWiki;
  const main = `Display ${RUN} Main`;
  const target = `Display ${RUN} Target`;
  const moved = `Display ${RUN} Moved`;
  const short = `Display ${RUN} Short`;
  const display = (title: string, query = '') => request(`${env.v1}/page/${seg(title)}/display${query}`);

  before(async () => {
    env = await startAgainstWiki(FAST_FOLLOWER);
    await env.wiki.edit(short, 'Tiny.');
    await env.wiki.edit(main, [
      `Lead with a link to [[${target}]], to [[${short}]], to [[${main}|itself]] and to [[${main}#Second|its second section]].`,
      '== First ==', 'One.', '=== First, deeper ===', 'One and a half.', '== Second ==', 'Two.', '== Third ==', 'Three.', '==== Deep ====', 'Deep.', '== Fourth ==', 'Four.',
    ].join('\n'));
  });
  after(() => env.close());

  it('marks links as MediaWiki does: red where the page is missing, self links, the same TOC numbers and section edit links', async () => {
    const res = await display(main);
    assert.equal(res.status, 200, res.text);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.match(String(res.headers.etag), /^W\/"\d+\/[0-9a-f-]{36}\/[\w-]+"$/);
    const html = res.text;
    const mw = await mediawikiParse(main);
    // Red links: the same targets as MediaWiki's own (links to pages that do not exist).
    const redHere = new Set(elements(html, (e) => e.name === 'a' && classes(e).includes('new')).map((e) => e.attribs.title!.replace(/ \(page does not exist\)$/, '')));
    const redThere = new Set(mw.links.filter((l) => !l.exists && l.title !== main).map((l) => l.title));
    assert.deepEqual(redHere, redThere);
    const [red] = wikiLinkTo(html, target);
    assert.equal(red!.attribs.href, `./${seg(target)}?action=edit&redlink=1`);
    assert.ok(!classes(wikiLinkTo(html, short)[0]!).includes('new'), 'an existing page is a blue link');
    // Self links: no href, no title; to a fragment, a link to that fragment.
    const self = elements(html, (e) => e.name === 'a' && classes(e).includes('mw-selflink'));
    assert.equal(self.length, 1);
    assert.deepEqual(self[0]!.attribs, { class: 'mw-selflink selflink' });
    const fragments = (page: string) => elements(page, (e) => e.name === 'a' && classes(e).includes('mw-selflink-fragment')).map((e) => e.attribs.href);
    assert.deepEqual(fragments(html), ['#Second']);
    // As MediaWiki marks them (its 1.39 here predates mw-selflink-fragment, added in 1.40).
    assert.equal(elements(mw.text, (e) => e.name === 'a' && classes(e).includes('mw-selflink')).length, self.length);
    // TOC: MediaWiki's entries, numbers and anchors.
    const toc = elements(html, (e) => e.name === 'li' && /^toclevel-/.test(e.attribs.class ?? '')).map((li) => {
      const a = DomUtils.findOne((e) => e.name === 'a', li.children)!;
      const number = DomUtils.textContent(DomUtils.findOne((e) => classes(e).includes('tocnumber'), li.children)!);
      return { number, anchor: a.attribs.href!.slice(1) };
    });
    assert.deepEqual(toc, mw.sections.map((s) => ({ number: s.number, anchor: s.anchor })));
    assert.equal(elements(html, (e) => e.attribs.id === 'toc').length, 1);
    // Section edit links, one per editable section, to the section MediaWiki numbers the same.
    const edits = elements(html, (e) => e.name === 'span' && classes(e).includes('mw-editsection')).map((s) => DomUtils.findOne((e) => e.name === 'a', s.children)!.attribs.href!);
    assert.deepEqual(edits, mw.sections.map((s) => `./${seg(main)}?action=edit&section=${s.index}`));
    const wrappers = elements(html, (e) => e.name === 'div' && classes(e).includes('mw-heading'));
    assert.deepEqual(wrappers.map((w) => w.attribs.class), ['mw-heading mw-heading2', 'mw-heading mw-heading3', 'mw-heading mw-heading2', 'mw-heading mw-heading2', 'mw-heading mw-heading4', 'mw-heading mw-heading2']);
    // Off on request, for clients that do not edit or have their own TOC.
    const plain = (await display(main, '?sectionedit=false&toc=false')).text;
    assert.equal(elements(plain, (e) => classes(e).includes('mw-editsection') || e.attribs.id === 'toc').length, 0);
  });

  it("follows MediaWiki's TOC rules: four headings, __NOTOC__, __FORCETOC__, __TOC__", async () => {
    const heads = (n: number) => Array.from({ length: n }, (_, i) => `== H${i + 1} ==\nText ${i + 1}.`).join('\n');
    const cases: [string, string][] = [
      [`Display ${RUN} Three`, heads(3)],
      [`Display ${RUN} Four`, heads(4)],
      [`Display ${RUN} Notoc`, `__NOTOC__\n${heads(5)}`],
      [`Display ${RUN} Forcetoc`, `__FORCETOC__\n${heads(2)}`],
      [`Display ${RUN} Placed`, `Intro.\n== H1 ==\nOne.\n__TOC__\nAfter the TOC.\n${heads(4).replace(/H(\d)/g, 'K$1')}`],
    ];
    for (const [title, text] of cases) await env.wiki.edit(title, text);
    for (const [title] of cases) {
      const html = (await display(title)).text;
      const mw = await mediawikiParse(title);
      assert.equal(elements(html, (e) => e.attribs.id === 'toc').length === 1, mw.showsToc, `${title}: a TOC as MediaWiki shows one`);
    }
    // __TOC__: the TOC is where the magic word was, after the first section's paragraph.
    const placed = (await display(`Display ${RUN} Placed`)).text;
    assert.ok(placed.indexOf('id="toc"') > placed.indexOf('One.') && placed.indexOf('id="toc"') < placed.indexOf('After the TOC.'));
  });

  it('marks stubs below the reader\'s threshold, and refuses unknown or bad options by name', async () => {
    const stub = (await display(main, '?stubthreshold=100')).text;
    assert.ok(classes(wikiLinkTo(stub, short)[0]!).includes('stub'));
    assert.ok(!classes(wikiLinkTo((await display(main)).text, short)[0]!).includes('stub'));
    const unknown = await display(main, '?foo=1&toc=false');
    assert.equal(unknown.status, 400);
    assert.equal(unknown.headers['content-type'], 'application/problem+json');
    assert.match(unknown.json.detail, /foo/);
    assert.equal((await display(main, '?stubthreshold=lots')).status, 400);
  });

  it("shows the images MediaWiki's own rendering shows under its bad image list, and leaves out those it leaves out", async () => {
    // Two images on the wiki, the list naming one of them, allowed only on the exception page (scripts/wiki.sh).
    const bad = 'Wikistore fixture bad image.png';
    const good = 'Wikistore fixture good image.png';
    const page = `Display ${RUN} Fixture images`;
    const exception = 'Wikistore fixture bad image exception';
    await env.wiki.edit(page, `[[File:${bad}]] and [[File:${good}]].`);
    await env.wiki.edit(exception, `[[File:${bad}]] and [[File:${good}]], ${RUN}.`);
    const oursShows = async (title: string, file: string) => (await display(title)).text.includes(`resource="./File:${seg(file)}"`);
    const mediawikiShows = async (title: string, file: string) => new RegExp(`<img [^>]*src="[^"]*/${seg(file)}"`).test((await mediawikiParse(title)).text);
    const shown: Record<string, boolean> = {};
    for (const title of [page, exception]) {
      for (const file of [bad, good]) {
        shown[`${title}: ${file}`] = await mediawikiShows(title, file);
        assert.equal(await oursShows(title, file), shown[`${title}: ${file}`], `${title}: ${file} as MediaWiki shows it`);
      }
    }
    assert.deepEqual(Object.values(shown), [false, true, true, true], 'the bad image only on its exception page, the other everywhere');
  });

  it("applies today's bad image list: a file added to it leaves the display within 3 s, except on the page it is allowed on", async () => {
    const bad = `Wikistore bad ${RUN}.jpg`;
    const good = `Wikistore good ${RUN}.jpg`;
    const page = `Display ${RUN} Images`;
    const allowed = `Display ${RUN} Allowed`;
    await env.wiki.edit(page, `[[File:${bad}]] and [[File:${good}]].`);
    await env.wiki.edit(allowed, `[[File:${bad}]] is allowed here.`);
    const shows = async (title: string, file: string) => (await display(title)).text.includes(`resource="./File:${seg(file)}"`);
    assert.deepEqual([await shows(page, bad), await shows(page, good), await shows(allowed, bad)], [true, true, true]);
    const listed = await (await fetch(`${WIKI_URL}/api.php?action=query&prop=revisions&rvprop=content&rvslots=main&titles=MediaWiki:Bad_image_list&format=json&formatversion=2`)).json() as any;
    const before = listed.query.pages[0].revisions?.[0]?.slots?.main?.content ?? '';
    await env.wiki.edit('MediaWiki:Bad_image_list', `${before}\n* [[:File:${bad}]] except on [[${allowed}]]`);
    await waitFor('the bad image to leave the display', 3000, async () => ((await shows(page, bad)) ? undefined : true));
    assert.equal(await shows(page, good), true, 'other images stay');
    assert.equal(await shows(allowed, bad), true, 'shown on the page the list allows it on');
  });

  it('marks the images on the noviewer list noviewer within 3 s of the list naming them', async () => {
    const file = `Wikistore noviewer ${RUN}.svg`;
    const page = `Display ${RUN} Icons`;
    await env.wiki.edit(page, `[[File:${file}]] and [[File:Wikistore other ${RUN}.svg]].`);
    const marked = async () => {
      const html = (await display(page)).text;
      return elements(html, (e) => /mw:File/.test(e.attribs.typeof ?? '') && classes(e).includes('noviewer')).length;
    };
    assert.equal(await marked(), 0);
    const listed = await (await fetch(`${WIKI_URL}/api.php?action=query&prop=revisions&rvprop=content&rvslots=main&titles=MediaWiki:Noviewer_image_list&format=json&formatversion=2`)).json() as any;
    const before = listed.query.pages[0].revisions?.[0]?.slots?.main?.content ?? '';
    await env.wiki.edit('MediaWiki:Noviewer_image_list', `${before}\n* [[:File:${file}]]`);
    await waitFor('the listed image to be marked noviewer', 3000, async () => ((await marked()) === 1 ? true : undefined));
  });

  it('keeps red links fresh without rendering again: created, deleted, moved', async () => {
    const isRed = async () => classes(wikiLinkTo((await display(main)).text, target)[0]!).includes('new');
    assert.equal(await isRed(), true);
    const renderOfMain = String((await display(main)).headers.etag).split('/')[2];
    await env.wiki.edit(target, 'Now it exists.');
    const started = Date.now();
    await waitFor('the link to turn blue', 3000, async () => ((await isRed()) ? undefined : true));
    assert.ok(Date.now() - started <= 3000);
    await env.wiki.delete(target);
    await waitFor('the link to turn red again', 3000, async () => ((await isRed()) ? true : undefined));
    await env.wiki.undelete(target);
    await waitFor('the link to turn blue once more', 3000, async () => ((await isRed()) ? undefined : true));
    await env.wiki.move(target, moved);
    await waitFor('the link to the old title to show a redirect', 3000, async () =>
      classes(wikiLinkTo((await display(main)).text, target)[0]!).includes('mw-redirect') ? true : undefined,
    );
    // The linking page was never rendered again: the same render, the only one stored.
    assert.equal(String((await display(main)).headers.etag).split('/')[2], renderOfMain);
    assert.equal((await request(`${env.v1}/page/${seg(main)}/html/`)).json.items.length, 1);
  });
});

/**
 * The wiki's notice of a change waits for nothing the wiki itself must answer: its editor's
 * request (a worker of the wiki) waits for the notice's answer, so a request from the service to
 * the wiki made before answering could find every worker waiting on notices. The links to the
 * page changed are looked at after the answer.
 */
describe('a notice of a change to a page that stored displays link to', () => {
  const SECRET = `display-notice-secret-${RUN}-0123456789`;
  let env: AgainstWiki;
  const linking = `Display notice ${RUN} Linking`;
  const linked = `Display notice ${RUN} Linked`;
  const display = () => request(`${env.v1}/page/${seg(linking)}/display`);
  const isRed = async () => classes(wikiLinkTo((await display()).text, linked)[0]!).includes('new');

  before(async () => {
    env = await startAgainstWiki({}, { notice_secret: SECRET });
    await env.wiki.edit(linking, `A link to [[${linked}]].`);
  });
  after(() => env.close());

  it('is answered without asking the wiki, and the link turns blue once the wiki answers again', async () => {
    assert.equal(await isRed(), true, 'the linked page does not exist yet');
    await env.wiki.edit(linked, 'Now it exists.');
    // The wiki taken away: whatever the notice waits for of it, it waits until the wiki's timeout.
    env.proxy.blackHole();
    const started = performance.now();
    const noticed = await request(`${env.v1}/changes`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SECRET}` },
      body: [{ page_change_kind: 'create', dt: new Date().toISOString(), page: { page_title: linked.replace(/ /g, '_'), namespace_id: 0 } }],
    });
    const took = performance.now() - started;
    assert.equal(noticed.status, 200, noticed.text);
    assert.ok(took < 2000, `the notice was answered in ${took.toFixed(0)} ms`);
    env.proxy.restore();
    await waitFor('the link to turn blue', 10_000, async () => ((await isRed()) ? undefined : true));
  });
});
