// Writes a MediaWiki XML export (0.10) of the wtf_wikipedia articles for importDump.php.
// Some articles get several revisions, grown section by section, so tests have history to walk.
import fs from 'node:fs';
import path from 'node:path';

const [dir, out] = process.argv.slice(2);
const escape = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const files = fs.readdirSync(dir).filter((f) => f.endsWith('.txt')).sort();
const titleOf = (file) => file.replace(/\.txt$/, '').replace(/[-_]/g, ' ');
const sectionsOf = (text) => text.split(/\n(?===[^=])/);
const multi = new Set(
  files
    .filter((f) => {
      const text = fs.readFileSync(path.join(dir, f), 'utf8');
      return text.length >= 4000 && text.length <= 120000 && sectionsOf(text).length >= 3;
    })
    .slice(0, 21),
);
const base = Date.parse('2020-01-01T00:00:00Z');
let xml = '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">\n';
files.forEach((file, i) => {
  const text = fs.readFileSync(path.join(dir, file), 'utf8');
  const sections = sectionsOf(text);
  const count = multi.has(file) ? Math.min(5, Math.max(3, sections.length)) : 1;
  xml += `  <page>\n    <title>${escape(titleOf(file))}</title>\n    <ns>0</ns>\n`;
  for (let k = 1; k <= count; k++) {
    const body = k === count ? text : sections.slice(0, Math.ceil((k * sections.length) / count)).join('\n');
    const timestamp = new Date(base + i * 86_400_000 + k * 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const comment = k === count ? 'Complete article' : `Article, part ${k} of ${count}`;
    xml += `    <revision>\n      <timestamp>${timestamp}</timestamp>\n      <contributor><username>CorpusImporter</username></contributor>\n`;
    xml += `      <comment>${comment}</comment>\n      <model>wikitext</model>\n      <format>text/x-wiki</format>\n`;
    xml += `      <text xml:space="preserve">${escape(body)}</text>\n    </revision>\n`;
  }
  xml += '  </page>\n';
});
xml += '</mediawiki>\n';
fs.writeFileSync(out, xml);
console.log(`${files.length} pages, ${multi.size} with several revisions`);
