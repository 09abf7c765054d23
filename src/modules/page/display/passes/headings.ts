import { DomUtils } from 'htmlparser2';
import type { Document, Element } from 'domhandler';

/** A heading of the page, as Parsoid sections it. */
export interface Heading {
  element: Element;
  level: number;
  /** Parsoid's section id: > 0 editable, negative from a template (not editable here). */
  sectionId: number;
  /** Its anchor (Parsoid's heading id, which MediaWiki's TOC links to). */
  id: string;
  text: string;
}

const HEADING = /^h([1-6])$/;

/** The headings that open Parsoid's sections, in document order. */
export function headingsOf(doc: Document): Heading[] {
  const sections = DomUtils.findAll((e) => e.name === 'section' && e.attribs['data-mw-section-id'] !== undefined, doc.children);
  const out: Heading[] = [];
  for (const section of sections) {
    const sectionId = Number(section.attribs['data-mw-section-id']);
    if (!Number.isInteger(sectionId) || sectionId === 0) continue;
    const first = section.children.find((c): c is Element => c.type === 'tag');
    const level = first ? HEADING.exec(first.name)?.[1] : undefined;
    if (!first || !level) continue;
    out.push({ element: first, level: Number(level), sectionId, id: first.attribs.id ?? '', text: DomUtils.textContent(first).trim() });
  }
  return out;
}
