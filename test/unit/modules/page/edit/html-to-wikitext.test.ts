import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { describe, it } from 'node:test';
import { htmlToWikitext } from '../../../../../src/modules/page/edit/html-to-wikitext.js';
import { HTML_2, toHtml2 } from '../../../../../src/modules/page/model/html-versions.js';
import type { Render } from '../../../../../src/modules/page/model/render.js';
import { WIKITEXT_TYPE } from '../../../../../src/upstream/parsoid.js';
import type { Wiki } from '../../../../../src/upstream/wiki.js';

const HTML_999 = '<html><head><meta property="mw:htmlVersion" content="999.0.0"/></head><body><p id="mwAA" typeof="mw:Transclusion">T</p><p id="mwAQ">Text</p></body></html>';
const DATA_MW = { ids: { mwAA: { parts: [{ template: { target: { wt: 'T' } } }] } } };
const WIKITEXT = "{{T}}\n\nText";

const render: Render = {
  title: 'Page', rev: 7, tid: '00000000-0000-1000-8000-000000000000', digest: 'd',
  parts: { html: gzipSync(HTML_999), 'data-parsoid': gzipSync('{"ids":{}}'), 'data-mw': gzipSync(JSON.stringify(DATA_MW)), wikitext: gzipSync(WIKITEXT) },
  types: { html: 'text/html; charset=utf-8; profile="https://www.mediawiki.org/wiki/Specs/HTML/999.0.0"', 'data-parsoid': 'application/json', 'data-mw': 'application/json', wikitext: WIKITEXT_TYPE },
};

/** A wiki whose Parsoid answers every transform with the same text, and counts them. */
function countingWiki(): { wiki: Wiki; transforms: unknown[] } {
  const transforms: unknown[] = [];
  const wiki = { transform: async (...args: unknown[]) => (transforms.push(args), { contentType: WIKITEXT_TYPE, body: Buffer.from('from Parsoid') }) } as unknown as Wiki;
  return { wiki, transforms };
}

describe('edited HTML to wikitext against its render', () => {
  it('answers a document left as it was served (999.x, or 2.x with data-mw inline) with the revision\'s wikitext, asking Parsoid nothing', async () => {
    for (const html of [HTML_999, toHtml2(HTML_999, DATA_MW, HTML_2)]) {
      const { wiki, transforms } = countingWiki();
      const part = await htmlToWikitext(wiki, 'Page', html, { render });
      assert.equal(part.body.toString('utf8'), WIKITEXT);
      assert.equal(part.contentType, WIKITEXT_TYPE);
      assert.equal(transforms.length, 0);
    }
  });

  it('asks Parsoid, with the render as the original, when the document or its data-mw changed, or scrubbing is asked for', async () => {
    const cases = [
      { html: HTML_999.replace('Text', 'Text edited'), from: {} },
      { html: toHtml2(HTML_999, DATA_MW, HTML_2).replace('Text', 'Text edited'), from: {} },
      { html: HTML_999, from: { dataMw: { ids: { mwAA: { parts: ['changed'] } } } } },
      { html: HTML_999, from: { scrubWikitext: true } },
    ];
    for (const { html, from } of cases) {
      const { wiki, transforms } = countingWiki();
      const part = await htmlToWikitext(wiki, 'Page', html, { render, ...from });
      assert.equal(part.body.toString('utf8'), 'from Parsoid');
      assert.equal(transforms.length, 1);
      const [kind, , , body] = transforms[0] as [string, string, unknown, { original: { html: { body: string } } }];
      assert.equal(kind, 'pagebundle');
      assert.ok(body.original.html.body.includes('<p id="mwAQ">Text</p>'));
    }
  });

  it('makes eight edits wikitext at once, 256 more waiting, and refuses one more with a 503 before it reads its render', async () => {
    const waiting: (() => void)[] = [];
    const wiki = { transform: () => new Promise((resolve) => waiting.push(() => resolve({ contentType: WIKITEXT_TYPE, body: Buffer.from('done') }))) } as unknown as Wiki;
    const edit = () => htmlToWikitext(wiki, 'Page', HTML_999.replace('Text', 'Text edited'), { render });
    const admitted = Array.from({ length: 8 + 256 }, edit);
    // Each reads its render first (gunzip on libuv's threads): waited for, however busy the machine.
    for (const started = Date.now(); waiting.length < 8 && Date.now() - started < 10_000; ) await new Promise((r) => setTimeout(r, 1));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(waiting.length, 8, 'eight sent to Parsoid, the others not yet prepared');
    await assert.rejects(edit(), (e: { status?: number; problemType?: string }) => e.status === 503 && e.problemType === 'urn:problem:transforms-busy');
    let done = 0;
    for (const p of admitted) void p.then(() => done++);
    let most = 0;
    while (done < admitted.length) {
      most = Math.max(most, waiting.length);
      if (waiting.length > 0) waiting.shift()!();
      else await new Promise((r) => setTimeout(r, 1));
    }
    assert.ok(most <= 8, `at most eight at Parsoid at once (${most})`);
    const parts = await Promise.all(admitted);
    assert.equal(parts.length, 264);
    assert.ok(parts.every((p) => p.body.toString() === 'done'));
  });
});
