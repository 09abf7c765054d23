import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { abstractOf, htmlStructure } from '../../../../../src/modules/page/model/html-structure.js';

const HTML = `<!DOCTYPE html><html><head><title>T</title></head><body>
<section data-mw-section-id="0"><div class="hatnote" role="note">For other uses, see <a href="./Other">Other</a>.</div>
<table class="infobox" about="#mwt1" typeof="mw:Transclusion" data-mw='{"parts":[{"template":{"target":{"wt":"Infobox city\\n"}}}]}'>
<tr><th>Country</th><td><a href="./Canada">Canada</a></td></tr>
<tr><th>Areas</th><td><ul><li>East</li><li>West</li></ul></td></tr>
<tr><th colspan="2">Header only</th></tr>
<tr><td><img src="//wiki.example/images/a.png" width="20" height="10"/></td></tr>
</table>
<p><a class="new" typeof="mw:Transclusion" about="#mwt2" href="./Template:Missing">Template:Missing</a></p>
<p><b>Toronto</b> (<a class="new" typeof="mw:Transclusion" about="#mwt3" href="./Template:IPA">Template:IPA</a>) is a <a href="./City">city</a>.<sup class="mw-ref reference"><a href="#cite_note-1">[1]</a></sup> <span id="coordinates">43N 79W</span></p>
<figure><img src="./Special:FilePath/Lead.jpg" data-file-width="800" data-file-height="600" width="220" height="165"/></figure>
<p>Second   lead paragraph.</p>
<table><tr><td><p>In a table.</p></td></tr></table>
</section>
<section data-mw-section-id="1"><h2 id="History">History <span class="mw-editsection">edit</span></h2>
<p>Old text with <a href="./Fort_York">Fort York</a>.</p>
<ul><li>one</li><li>two</li></ul>
<section data-mw-section-id="2"><h3>Early</h3><p>Early text.</p></section>
<div><p>Wrapped paragraph.</p></div>
</section>
<section data-mw-section-id="3"><h2>References</h2><div class="mw-references-wrap"><ol class="mw-references references" data-mw-group="note"><li id="cite_note-1"><a rel="mw:referencedBy">↑</a> <span class="mw-reference-text">A source, <a href="./Cited">Cited</a>.</span></li></ol></div></section>
</body></html>`;

const resolve = (href: string) => `https://wiki.example${href.startsWith('./') ? `/wiki/${href.slice(2)}` : href.replace(/^\/\/wiki.example/, '')}`;

describe("a render's structure as Enterprise gives it", () => {
  it("makes the abstract of the lead's prose alone: no hatnote, infobox, table, reference, coordinates or missing template", () => {
    assert.equal(abstractOf(HTML).abstract, 'Toronto is a city.\nSecond lead paragraph.');
  });

  it("takes the lead's first image large enough to stand for the page", () => {
    assert.deepEqual(abstractOf(HTML).leadImage, { content_url: './Special:FilePath/Lead.jpg', width: 800, height: 600 });
  });

  it('nests sections by heading, in order, each with its paragraphs, lists and links', () => {
    const { sections } = htmlStructure(HTML, resolve);
    assert.deepEqual(sections.map((s) => s.name), ['Abstract', 'History', 'References']);
    const history = sections[1]!;
    assert.deepEqual(history.has_parts!.map((p) => p.type), ['paragraph', 'list', 'section', 'paragraph']);
    assert.deepEqual(history.has_parts![0], { type: 'paragraph', value: 'Old text with Fort York.', links: [{ url: 'https://wiki.example/wiki/Fort_York', text: 'Fort York' }] });
    assert.deepEqual(history.has_parts![1]!.has_parts!.map((i) => i.value), ['one', 'two']);
    assert.equal(history.has_parts![2]!.name, 'Early');
    assert.equal(sections[0]!.has_parts!.filter((p) => p.type === 'paragraph').length, 3, 'the lead keeps every paragraph of its own, the template-made one too');
  });

  it('reads infoboxes as fields, with values, links and images, named by their template', () => {
    const { infoboxes } = htmlStructure(HTML, resolve);
    assert.equal(infoboxes.length, 1);
    assert.equal(infoboxes[0]!.name, 'Infobox city');
    assert.deepEqual(infoboxes[0]!.has_parts!.map((f) => f.name), ['Country', 'Areas']);
    assert.deepEqual(infoboxes[0]!.has_parts![0]!.links, [{ url: 'https://wiki.example/wiki/Canada', text: 'Canada' }]);
    assert.deepEqual(infoboxes[0]!.has_parts![1]!.values, ['East', 'West']);
  });

  it('lists references with their group, text and links', () => {
    const { references } = htmlStructure(HTML, resolve);
    assert.deepEqual(references, [{ identifier: 'cite_note-1', group: 'note', text: { value: 'A source, Cited.', links: [{ url: 'https://wiki.example/wiki/Cited', text: 'Cited' }] } }]);
  });
});
