import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gunzipSync, gzipSync } from 'node:zlib';
import { HttpError } from '../../../../../src/util/errors.js';
import { Html2Cache, negotiateHtml, THREAD_HTML2_BYTES, toHtml2, toHtml2ByTokenizer, type Html2Parts } from '../../../../../src/modules/page/model/html-versions.js';
import { workerFormatter } from '../../../../../src/modules/page/thread/page-thread.js';
import type { BundleRender } from '../../../../../src/modules/page/model/render.js';

describe('HTML versions for rest_v1 clients', () => {
  it('puts data-mw back inline by id, whatever the attribute values hold, and says 2.x in the head', () => {
    const html = '<html><head><meta property="mw:htmlVersion" content="999.0.0"/><meta property="mw:html:version" content="999.0.0"/></head>' +
      '<body><p id="mwAA" title="a > b">x</p><img id="mwAB" src="y"/><span id="mwAC">z</span><span id="mwZZ">no data-mw</span></body></html>';
    const dataMw = { ids: { mwAA: { parts: ["it's & <b>"] }, mwAB: { a: 1 }, mwAC: { caption: '"q"' } } };
    const out = toHtml2(html, dataMw);
    assert.equal(
      out,
      '<html><head><meta property="mw:htmlVersion" content="2.6.0"/><meta property="mw:html:version" content="2.6.0"/></head>' +
        `<body><p id="mwAA" title="a > b" data-mw='{"parts":["it&#39;s &amp; <b>"]}'>x</p><img id="mwAB" src="y" data-mw='{"a":1}'/>` +
        `<span id="mwAC" data-mw='{"caption":"\\"q\\""}'>z</span><span id="mwZZ">no data-mw</span></body></html>`,
    );
  });

  it('gives the tokenizer\'s bytes where ids are found by their text, and where they cannot be', () => {
    const dataMw = { ids: { mwAA: { a: 1 }, 'x&y': { b: 2 }, mwAC: { c: 3 } } };
    const cases = [
      // Each id once, in a tag; a later attribute holding '>' and a self-closing tag.
      '<p id="mwAA" title="a > b" class="c">x</p><span id="x&amp;y">y</span><br id="mwAC"/>',
      // An id also written in a comment and in text: the tokenizer decides.
      '<!-- <p id="mwAA"> --><p id="mwAA">x</p> text id="mwAC" <i id="mwAC">i</i>',
      // An element keeping its own data-mw, an id in single quotes, one not in data-mw.
      `<p id="mwAA" data-mw='{"kept":1}'>x</p><b id='mwAC'>b</b><u id="mwZZ">u</u>`,
      // An id inside another attribute's value (escaped quotes cannot end it early).
      '<a title="see id=&quot;mwAA&quot;" id="mwAA">a</a><q id="mwAC">q</q>',
    ];
    for (const html of cases) assert.equal(toHtml2(html, dataMw), toHtml2ByTokenizer(html, dataMw), html);
    assert.match(toHtml2(cases[0]!, dataMw), /<p id="mwAA" title="a > b" class="c" data-mw='\{"a":1\}'>/);
    assert.match(toHtml2(cases[1]!, dataMw), /^<!-- <p id="mwAA"> --><p id="mwAA" data-mw=/);
  });

  it('takes 2.x and 999.x profiles, defaults to 2.x, and refuses other versions', () => {
    assert.equal(negotiateHtml(undefined, '2'), '2');
    assert.equal(negotiateHtml('text/html', '2'), '2');
    assert.equal(negotiateHtml('text/html', '999'), '999');
    assert.equal(negotiateHtml('text/html; charset=utf-8; profile="https://www.mediawiki.org/wiki/Specs/HTML/2.4.0"', '999'), '2');
    assert.equal(negotiateHtml('text/html; profile="https://www.mediawiki.org/wiki/Specs/HTML/999.0.0"', '2'), '999');
    assert.throws(() => negotiateHtml('text/html; profile="https://www.mediawiki.org/wiki/Specs/HTML/3.0.0"', '2'), /3\.0\.0/);
    assert.throws(() => negotiateHtml('text/html; profile="https://www.mediawiki.org/wiki/Specs/HTML/2.8.0"', '2'), /2\.8\.0/);
  });
});

/** A render of `paragraphs` paragraphs, each with a template (data-mw by id) and non-ASCII text. */
function renderOf(paragraphs: number, tid: string, plain: boolean): BundleRender {
  const ids: Record<string, unknown> = {};
  let body = '';
  for (let i = 0; i < paragraphs; i++) {
    body += `<p id="mw${i}">Łódź ${i} <span typeof="mw:Transclusion" id="mwT${i}">x</span></p>`;
    ids[`mwT${i}`] = { parts: [{ template: { target: { wt: `T${i}` }, params: { 1: { wt: "it's" } }, i: 0 } }] };
  }
  const html = Buffer.from(`<html><head><meta property="mw:htmlVersion" content="999.0.0"/></head><body>${body}</body></html>`);
  const dataMw = Buffer.from(JSON.stringify({ ids }));
  const empty = gzipSync('{}');
  return {
    title: 'Page', rev: 1, tid,
    parts: { html: gzipSync(html), 'data-parsoid': empty, 'data-mw': gzipSync(dataMw) },
    types: { html: '', 'data-parsoid': '', 'data-mw': '' },
    ...(plain ? { plain: { html, dataMw } } : {}),
  } as BundleRender;
}

describe('the 2.x HTML of renders, kept', () => {
  it("of a long article is made on a worker thread (the event loop left to requests), the same bytes as made here, stored or just made", async () => {
    const thread = workerFormatter(1);
    const cache = new Html2Cache(1 << 24, thread.html2);
    const here = new Html2Cache(1 << 24, async () => assert.fail('made here, not on the thread'));
    try {
      const long = 4000;
      for (const plain of [false, true]) {
        const render = renderOf(long, `t-${plain}`, plain);
        assert.ok(render.parts.html.length * 5 >= THREAD_HTML2_BYTES, 'large enough for the thread');
        const made = await cache.of('d', render);
        const expected = toHtml2(gunzipSync(render.parts.html).toString('utf8'), JSON.parse(gunzipSync(render.parts['data-mw']).toString('utf8')));
        assert.equal(gunzipSync(made).toString('utf8'), expected);
        assert.ok(Buffer.isBuffer(made), 'a Buffer, as sent');
        // The bytes a small render made here would have: gzip at the level `compress` uses.
        assert.equal(Buffer.compare(made, gzipSync(Buffer.from(expected), { level: 6 })), 0);
      }
      const small = renderOf(3, 'small', false);
      assert.equal(gunzipSync(await here.of('d', small)).toString('utf8'), toHtml2(gunzipSync(small.parts.html).toString('utf8'), JSON.parse(gunzipSync(small.parts['data-mw']).toString('utf8'))));
    } finally {
      await thread.close();
    }
  });

  it('goes to the thread from a long article on, once per render', async () => {
    const sent: Html2Parts[] = [];
    const thread = workerFormatter(1);
    const cache = new Html2Cache(1 << 24, async (parts) => (sent.push(parts), thread.html2(parts)));
    try {
      await cache.of('d', renderOf(3, 'a', false));
      await cache.of('d', renderOf(3, 'b', true));
      assert.equal(sent.length, 0);
      const long = renderOf(4000, 'c', false);
      await cache.of('d', long);
      await cache.of('d', long);
      assert.deepEqual(sent.map((p) => p.gzipped), [true]);
    } finally {
      await thread.close();
    }
  });

  it('makes a render asked for many times at once once, and refuses long ones past those waiting for the thread with a 503', async () => {
    const asked: (() => void)[] = [];
    const cache = new Html2Cache(1 << 24, (parts) => new Promise((resolve) => asked.push(() => resolve(gzipSync(parts.html)))));
    const long = renderOf(4000, 'same', false);
    const same = Array.from({ length: 20 }, () => cache.of('d', long));
    await new Promise((r) => setImmediate(r));
    assert.equal(asked.length, 1, 'one making for twenty askers');
    // Four being made, 256 waiting: the next long render is refused at once.
    const others = Array.from({ length: 259 }, (_, i) => cache.of('d', renderOf(4000, `other-${i}`, false)));
    await assert.rejects(cache.of('d', renderOf(4000, 'one-too-many', false)), (e: HttpError) => e.status === 503 && e.headers['retry-after'] === '2');
    // Small renders are made here, never refused.
    assert.ok((await cache.of('d', renderOf(3, 'small', false))).length > 0);
    while (asked.length) {
      asked.shift()!();
      await new Promise((r) => setImmediate(r));
    }
    const made = await Promise.all(same);
    assert.ok(made.every((m) => m === made[0]), 'every asker the same answer');
    assert.equal((await Promise.all(others)).length, 259);
  });
});

