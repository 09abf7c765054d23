/**
 * One section of a render, by Parsoid's `data-mw-section-id` (0: the lead; a section holds its
 * subsections, as MediaWiki's `section=N` does). Template-generated sections have negative ids
 * and are not editable: they are never asked for here.
 */

/** Where section `id`'s element starts and ends in `html`, and its opening tag. */
function bounds(html: string, id: number): { start: number; end: number; openTag: string } | undefined {
  const open = new RegExp(`<section\\b[^>]*\\sdata-mw-section-id="${id}"[^>]*>`).exec(html);
  if (!open) return undefined;
  // The matching </section>: nested sections open and close in between.
  const tags = /<section\b[^>]*>|<\/section\s*>/g;
  tags.lastIndex = open.index + open[0].length;
  let depth = 1;
  for (let m = tags.exec(html); m; m = tags.exec(html)) {
    depth += m[0].startsWith('</') ? -1 : 1;
    if (depth === 0) return { start: open.index, end: m.index + m[0].length, openTag: open[0] };
  }
  return undefined;
}

/** The section's element (with its subsections), or undefined if the render has none with that id. */
export function sectionHtml(html: string, id: number): string | undefined {
  const b = bounds(html, id);
  return b && html.slice(b.start, b.end);
}

/** The document with section `id` replaced by `edited` (an edited copy of that section's element). */
export function withSection(html: string, id: number, edited: string): string | undefined {
  const b = bounds(html, id);
  return b && html.slice(0, b.start) + edited.trim() + html.slice(b.end);
}

interface DataParsoid {
  ids?: Record<string, { dsr?: (number | null)[] }>;
  offsetType?: 'byte' | 'ucs2' | 'char';
}

/**
 * The section's wikitext, as MediaWiki cuts it (`rvsection`: trailing whitespace trimmed): from
 * the first source offset Parsoid recorded inside the section (its data-parsoid `dsr`; the lead
 * starts at 0) to the first one of the section after it, or the end. Section wrappers have no
 * offsets of their own.
 */
export function sectionWikitext(html: string, dataParsoid: DataParsoid, wikitext: Buffer, id: number): string | undefined {
  const b = bounds(html, id);
  if (!b) return undefined;
  const firstOffset = (from: number, to = html.length): number | undefined => {
    const ids = /\sid="([^"]+)"/g;
    ids.lastIndex = from;
    for (let m = ids.exec(html); m && m.index < to; m = ids.exec(html)) {
      const start = dataParsoid.ids?.[m[1]!]?.dsr?.[0];
      if (typeof start === 'number') return start;
    }
    return undefined;
  };
  const text = dataParsoid.offsetType === 'byte' || dataParsoid.offsetType === undefined ? undefined : wikitext.toString('utf8');
  const length = text === undefined ? wikitext.length : dataParsoid.offsetType === 'ucs2' ? text.length : Array.from(text).length;
  const from = id === 0 ? 0 : firstOffset(b.start + b.openTag.length, b.end);
  if (from === undefined) return undefined;
  const next = html.indexOf('<section', b.end);
  const to = (next >= 0 ? firstOffset(next) : undefined) ?? length;
  const cut = text === undefined
    ? wikitext.subarray(from, to).toString('utf8')
    : dataParsoid.offsetType === 'ucs2' ? text.slice(from, to) : Array.from(text).slice(from, to).join('');
  return cut.trimEnd();
}
