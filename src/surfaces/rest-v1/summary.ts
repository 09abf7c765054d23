import { parseDocument, DomUtils } from 'htmlparser2';
import { isTag, isText, type ChildNode, type Element } from 'domhandler';

/** Inline markup an extract keeps; everything else is reduced to its text. */
const KEPT = new Set(['b', 'i', 'strong', 'em', 'sub', 'sup', 'small', 'span', 'bdi', 'abbr', 'q', 'var', 'code', 'kbd']);
/** Markup that says nothing in an extract: references, hidden and generated parts. */
const DROPPED = (el: Element) =>
  (el.name === 'sup' && /\bmw-ref\b|\breference\b/.test(el.attribs.class ?? '')) ||
  el.name === 'style' || el.name === 'script' || el.name === 'link' || el.name === 'meta' ||
  /display:\s*none/.test(el.attribs.style ?? '') ||
  /\bmw-empty-elt\b|\bnoexcerpt\b|\bcoordinates\b/.test(el.attribs.class ?? '');

const escapeText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function simplified(nodes: ChildNode[]): string {
  let out = '';
  for (const node of nodes) {
    if (isText(node)) out += escapeText(node.data);
    else if (isTag(node)) {
      if (DROPPED(node)) continue;
      const inner = simplified(node.children);
      out += KEPT.has(node.name) ? `<${node.name}>${inner}</${node.name}>` : inner;
    }
  }
  return out;
}

/** Text written in the paragraph itself, leaving out what templates generated (hatnotes, maintenance tags). */
function ownText(nodes: ChildNode[], transclusions: Set<string>): string {
  let out = '';
  for (const node of nodes) {
    if (isText(node)) out += node.data;
    else if (isTag(node)) {
      const about = node.attribs.about;
      if (/\bmw:Transclusion\b/.test(node.attribs.typeof ?? '')) {
        if (about) transclusions.add(about);
        continue;
      }
      if (about && transclusions.has(about)) continue;
      out += ownText(node.children, transclusions);
    }
  }
  return out;
}

export interface LeadSummary {
  extract: string;
  extractHtml: string;
  thumbnail?: { source: string; width: number; height: number };
}

/**
 * The lead of a Parsoid page: its first paragraph with text (as plain text and as simple HTML)
 * and its first image, as a link preview shows them. Paragraphs inside infoboxes and other
 * tables do not count: only those directly in the lead section.
 */
export function leadSummary(html: string, base: string): LeadSummary {
  const doc = parseDocument(html);
  const lead = DomUtils.findOne((el) => el.name === 'section' && el.attribs['data-mw-section-id'] === '0', doc.children, true);
  const scope = lead ? lead.children : (DomUtils.findOne((el) => el.name === 'body', doc.children, true)?.children ?? []);
  let extract = '';
  let extractHtml = '';
  for (const node of scope) {
    if (!isTag(node) || node.name !== 'p') continue;
    if (ownText(node.children, new Set()).trim().length === 0) continue;
    const inner = simplified(node.children).replace(/\s+/g, ' ').trim();
    const text = DomUtils.textContent(parseDocument(inner)).trim();
    if (text.length === 0) continue;
    extractHtml = `<p>${inner}</p>`;
    extract = text;
    break;
  }
  const img = DomUtils.findOne((el) => el.name === 'img' && !!el.attribs.src, scope, true);
  const width = Number(img?.attribs.width);
  const height = Number(img?.attribs.height);
  const thumbnail = img && width > 0 && height > 0 ? { source: new URL(img.attribs.src!, base).href, width, height } : undefined;
  return { extract, extractHtml, thumbnail };
}
