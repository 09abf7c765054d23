import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { negotiateHtml, toHtml2 } from '../../../../../src/modules/page/model/html-versions.js';

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
