import { Element, Text, type ChildNode, type Document } from 'domhandler';
import { DomUtils } from 'htmlparser2';
import type { DisplayPass } from '../display-pass.js';
import { headingsOf, type Heading } from './headings.js';

/** MediaWiki shows a TOC from this many headings on (unless `__NOTOC__`; `__FORCETOC__` always). */
const MIN_HEADINGS = 4;

const pageProp = (doc: Document, name: string) =>
  DomUtils.findOne((e) => e.name === 'meta' && (e.attribs.property ?? '').toLowerCase() === `mw:pageprop/${name}`, doc.children);

/** One TOC entry: its level in the TOC (not the heading's) and its number, "2.1". */
export interface TocEntry {
  heading: Heading;
  tocLevel: number;
  number: string;
}

/**
 * MediaWiki's TOC numbering (Parser::finalizeHeadings): a heading deeper than the previous opens
 * a level, a shallower one returns to the level of the nearest heading as shallow, and each level
 * counts its headings.
 */
export function numberHeadings(headings: Heading[]): TocEntry[] {
  const levelOf: number[] = [];
  const counts: number[] = [];
  let tocLevel = 0;
  let previous = 0;
  return headings.map((heading) => {
    const level = heading.level;
    if (level > previous) {
      tocLevel++;
      counts[tocLevel] = 0;
    } else if (level < previous && tocLevel > 1) {
      let i = tocLevel;
      for (; i > 0; i--) {
        if (levelOf[i] === level) {
          tocLevel = i;
          break;
        }
        if (levelOf[i]! < level) {
          tocLevel = i + 1;
          break;
        }
      }
      if (i === 0) tocLevel = 1;
    }
    levelOf[tocLevel] = level;
    previous = level;
    counts[tocLevel] = (counts[tocLevel] ?? 0) + 1;
    const number = counts.slice(1, tocLevel + 1).filter((n) => n).join('.');
    return { heading, tocLevel, number };
  });
}

const el = (name: string, attribs: Record<string, string>, children: ChildNode[] = []) => new Element(name, attribs, children);
const text = (t: string) => new Text(t);

/** The wiki's TOC markup (`div#toc`, `toclevel-N`, `tocsection-N`, `tocnumber`, `toctext`). */
function tocElement(entries: TocEntry[]): Element {
  const root = el('ul', {});
  const stack: Element[] = [root];
  let lastItem: Element | undefined;
  let depth = 1;
  for (const entry of entries) {
    while (depth < entry.tocLevel && lastItem) {
      const list = el('ul', {});
      DomUtils.appendChild(lastItem, list);
      stack.push(list);
      depth++;
    }
    while (depth > entry.tocLevel && stack.length > 1) {
      stack.pop();
      depth--;
    }
    const section = entry.heading.sectionId > 0 ? String(entry.heading.sectionId) : `T-${-entry.heading.sectionId}`;
    lastItem = el('li', { class: `toclevel-${entry.tocLevel} tocsection-${section}` }, [
      el('a', { href: `#${entry.heading.id}` }, [el('span', { class: 'tocnumber' }, [text(entry.number)]), text(' '), el('span', { class: 'toctext' }, [text(entry.heading.text)])]),
    ]);
    DomUtils.appendChild(stack[stack.length - 1]!, lastItem);
  }
  return el('div', { id: 'toc', class: 'toc', role: 'navigation', 'aria-labelledby': 'mw-toc-heading' }, [
    el('input', { type: 'checkbox', role: 'button', id: 'toctogglecheckbox', class: 'toctogglecheckbox', style: 'display:none' }),
    el('div', { class: 'toctitle', lang: 'en', dir: 'ltr' }, [
      el('h2', { id: 'mw-toc-heading' }, [text('Contents')]),
      el('span', { class: 'toctogglespan' }, [el('label', { class: 'toctogglelabel', for: 'toctogglecheckbox' })]),
    ]),
    root,
  ]);
}

/**
 * The table of contents by MediaWiki's rules: shown from four headings on unless `__NOTOC__`,
 * always with `__FORCETOC__` (Parsoid keeps both as mw:PageProp meta tags); where `__TOC__` is,
 * else before the first heading.
 */
export const tocPass: DisplayPass = {
  name: 'toc',
  shouldRun: (ctx) => ctx.options.toc,
  transform(doc) {
    const headings = headingsOf(doc);
    if (headings.length === 0) return;
    const forced = pageProp(doc, 'forcetoc');
    if (!forced && (pageProp(doc, 'notoc') || headings.length < MIN_HEADINGS)) return;
    const toc = tocElement(numberHeadings(headings));
    const placed = pageProp(doc, 'toc');
    if (placed) DomUtils.replaceElement(placed, toc);
    else {
      // Before the first heading: at the end of the lead (section 0), or before the heading's section.
      const firstSection = headings[0]!.element.parent as Element;
      const before = DomUtils.prevElementSibling(firstSection);
      const lead = before?.attribs['data-mw-section-id'] === '0' ? before : undefined;
      if (lead) DomUtils.appendChild(lead, toc);
      else DomUtils.prepend(firstSection, toc);
    }
  },
};
