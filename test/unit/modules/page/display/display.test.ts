import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HttpError } from '../../../../../src/util/errors.js';
import { displayOptions } from '../../../../../src/modules/page/display/display-pages.js';
import { numberHeadings } from '../../../../../src/modules/page/display/passes/toc.js';
import type { Heading } from '../../../../../src/modules/page/display/passes/headings.js';
import { displayHtml } from '../../../../../src/modules/page/display/pipeline.js';
import { parseImageList } from '../../../../../src/modules/page/display/image-lists.js';
import type { LinkTargetState } from '../../../../../src/upstream/action-api.js';

const heading = (level: number, i: number) => ({ level, sectionId: i + 1, id: `h${i}`, text: `H${i}` }) as Heading;
const numbers = (levels: number[]) => numberHeadings(levels.map(heading)).map((e) => `${e.tocLevel}:${e.number}`);
const state = (title: string, s: Partial<LinkTargetState>): [string, LinkTargetState] => [title, { title, exists: true, redirect: false, disambiguation: false, length: 5000, ns: 0, ...s }];
const options = { sectionEdit: false, toc: false, stubThreshold: 0 };

describe('display HTML passes', () => {
  it("numbers TOC entries as MediaWiki's parser does, levels relative to the headings before", () => {
    assert.deepEqual(numbers([2, 3, 3, 2, 4, 2]), ['1:1', '2:1.1', '2:1.2', '1:2', '2:2.1', '1:3']);
    // A first heading deeper than a later one: both at the top level.
    assert.deepEqual(numbers([3, 2, 3]), ['1:1', '1:2', '2:2.1']);
    // Back up past a level never used: to the nearest shallower one.
    assert.deepEqual(numbers([2, 4, 3, 2]), ['1:1', '2:1.1', '2:1.2', '1:2']);
  });

  it('marks links by state anew, clearing what the render marked, and leaves unknown targets as they were', async () => {
    const html = '<p><a rel="mw:WikiLink" href="./Gone" title="Gone">a</a> <a rel="mw:WikiLink" href="./Back?action=edit&amp;redlink=1" class="new" title="Back (page does not exist)">b</a> ' +
      '<a rel="mw:WikiLink" href="./Old_name" title="Old name">c</a> <a rel="mw:WikiLink" href="./Short" title="Short">d</a> <a rel="mw:WikiLink" href="./Unknown" class="new">e</a></p>';
    const states = new Map([state('Gone', { exists: false, length: null }), state('Back', {}), state('Old_name', { redirect: true }), state('Short', { length: 10 })]);
    const { html: out, targets } = await displayHtml('Page', html, { ...options, stubThreshold: 100 }, async () => states);
    assert.deepEqual(targets.sort(), ['Back', 'Gone', 'Old_name', 'Short', 'Unknown']);
    assert.match(out, /<a rel="mw:WikiLink" href="\.\/Gone\?action=edit&amp;redlink=1" title="Gone \(page does not exist\)" class="new">a<\/a>/);
    assert.match(out, /<a rel="mw:WikiLink" href="\.\/Back" title="Back">b<\/a>/, 'created since the render: a blue link again');
    assert.match(out, /href="\.\/Old_name" title="Old name" class="mw-redirect"/);
    assert.match(out, /href="\.\/Short" title="Short" class="stub"/);
    assert.match(out, /href="\.\/Unknown" class="new"/, 'no state known (the wiki down): the render\'s mark stays');
  });

  it('refuses unknown options by name and bad values, with defaults for the rest', () => {
    assert.deepEqual(displayOptions(new URLSearchParams('')), { sectionEdit: true, toc: true, stubThreshold: 0 });
    assert.deepEqual(displayOptions(new URLSearchParams('toc=false&sectionedit=0&stubthreshold=250')), { sectionEdit: false, toc: false, stubThreshold: 250 });
    for (const [query, named] of [['foo=1', /foo/], ['toc=maybe', /toc/], ['stubthreshold=-1', /stubthreshold/], ['stubthreshold=99999999999', /stubthreshold/]] as const) {
      assert.throws(() => displayOptions(new URLSearchParams(query)), (e: unknown) => e instanceof HttpError && e.status === 400 && named.test(e.detail));
    }
  });
});

describe('the bad image list', () => {
  it("reads MediaWiki's format: * lines, the file first, then the pages it is allowed on", () => {
    const list = parseImageList([
      'Images listed here are shown only where allowed.',
      '* [[:File:Bad one.jpg]] except on [[Allowed page]], [[Talk:Other]]',
      '*[[File:bad_two.png]]',
      '[[:File:Not a list line.jpg]]',
      '* no link here',
    ].join('\n'));
    assert.deepEqual([...list.files.keys()], ['Bad_one.jpg', 'Bad_two.png']);
    assert.deepEqual([...list.files.get('Bad_one.jpg')!], ['Allowed_page', 'Talk:Other']);
    assert.notEqual(list.version, parseImageList('* [[:File:Bad one.jpg]]').version);
  });

  it('takes images on the list out of the display, except on the pages it names', async () => {
    const html = '<section data-mw-section-id="0"><figure typeof="mw:File/Thumb"><a href="./File:Bad_one.jpg"><img resource="./File:Bad_one.jpg" src="x"/></a></figure>' +
      '<span typeof="mw:Error mw:File"><a href="./Special:FilePath/Good.jpg"><span class="mw-file-element mw-broken-media" resource="./File:Good.jpg">File:Good.jpg</span></a></span></section>';
    const list = parseImageList('* [[:File:Bad one.jpg]] [[Allowed_page]]');
    const none = async () => new Map<string, LinkTargetState>();
    const images = { badImages: list, noviewerImages: { files: new Map(), version: '' }, pageImage: undefined };
    const elsewhere = (await displayHtml('Some_page', html, options, none, images)).html;
    assert.doesNotMatch(elsewhere, /Bad_one/);
    assert.match(elsewhere, /resource="\.\/File:Good\.jpg"/);
    assert.match((await displayHtml('Allowed_page', html, options, none, images)).html, /resource="\.\/File:Bad_one\.jpg"/);
  });

  it("marks the page's own image and the images on the noviewer list noviewer, and no other", async () => {
    const media = (file: string) => `<figure typeof="mw:File/Thumb"><a href="./File:${file}"><img resource="./File:${file}" src="x"/></a></figure>`;
    const html = `<section data-mw-section-id="0">${media('Lead.jpg')}${media('Icon.svg')}${media('Other.jpg')}</section>`;
    const images = { badImages: { files: new Map(), version: '' }, noviewerImages: parseImageList('* [[:File:Icon.svg]]'), pageImage: 'Lead.jpg' };
    const out = (await displayHtml('Page', html, options, async () => new Map(), images)).html;
    const marked = [...out.matchAll(/<figure typeof="mw:File\/Thumb"( class="noviewer")?><a href="\.\/File:([^"]+)"/g)].map((m) => `${m[2]}:${!!m[1]}`);
    assert.deepEqual(marked, ['Lead.jpg:true', 'Icon.svg:true', 'Other.jpg:false']);
  });
});
