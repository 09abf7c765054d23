import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { negotiateHtml, toHtml2, toHtml2ByTokenizer } from '../../../../../src/modules/page/model/html-versions.js';

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
