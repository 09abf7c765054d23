import { Element, type AnyNode } from 'domhandler';
import { DomUtils, parseDocument } from 'htmlparser2';

/** A link as Enterprise gives it: where it goes (absolute) and its text. */
export interface Link {
  url: string;
  text: string;
}

export interface Image {
  content_url: string;
  width?: number;
  height?: number;
  alternative_text?: string;
}

/** A part of Enterprise's structured contents (a section, paragraph, list, list item, infobox field). */
export interface Part {
  type: string;
  name?: string;
  value?: string;
  values?: string[];
  links?: Link[];
  images?: Image[];
  has_parts?: Part[];
}

export interface Reference {
  identifier: string;
  group?: string;
  text: { value: string; links: Link[] };
}

/** What a render's HTML gives a record and its structured contents. */
export interface HtmlStructure {
  abstract: string;
  /** The lead section's first image (where the wiki's page image is not known). */
  leadImage?: Image;
  sections: Part[];
  infoboxes: Part[];
  references: Reference[];
}

/** What a render gives its record (made with its body, stored with it). */
export interface RenderFacts {
  abstract: string;
  /** The wikitext's length in characters (code points). */
  characters: number;
  /** The lead section's first image, as the HTML gives its source (resolved against the wiki's URL). */
  leadImage?: { src: string; width?: number; height?: number };
}

/** Resolves a Parsoid link (`./Title`) against the wiki's article URL. */
export type LinkResolver = (href: string) => string;

const HEADING = /^h[1-6]$/;
const classes = (el: Element) => (el.attribs.class ?? '').split(/\s+/);
const hasClass = (el: Element, name: string) => classes(el).includes(name);
const isElement = (node: AnyNode): node is Element => node.type === 'tag' || node.type === 'script' || node.type === 'style';

/** Elements whose text is not prose: references, styles, hidden and metadata, coordinates, edit links. */
function isNoise(el: Element): boolean {
  if (el.name === 'style' || el.name === 'script' || el.name === 'link' || el.name === 'meta') return true;
  if (el.name === 'sup' && (hasClass(el, 'mw-ref') || hasClass(el, 'reference'))) return true;
  const c = classes(el);
  return c.includes('mw-empty-elt') || c.includes('noprint') || c.includes('mw-editsection') || c.includes('geo') || el.attribs.id === 'coordinates' || el.attribs.style?.replace(/\s/g, '').includes('display:none') === true;
}

/** Not part of the lead's prose: infoboxes, tables, hatnotes, navigation, figures. */
function isAside(el: Element): boolean {
  if (el.name === 'table' || el.name === 'figure' || el.name === 'style') return true;
  const c = classes(el);
  return c.includes('infobox') || c.includes('hatnote') || c.includes('navbox') || c.includes('shortdescription') || el.attribs.role === 'note' || el.attribs.role === 'navigation';
}

/** A transclusion of a template the wiki lacks: Parsoid writes a link to it, no content of the page's. */
const isMissingTemplate = (el: Element) => el.name === 'a' && hasClass(el, 'new') && (el.attribs.typeof ?? '').includes('mw:Transclusion');

/**
 * The text a reader sees: references, styles and hidden elements left out (and, for an abstract,
 * `bare`, the links that stand for templates the wiki lacks).
 */
export function proseText(node: AnyNode, bare = false): string {
  if (node.type === 'text') return (node as unknown as { data: string }).data;
  if (!isElement(node) || isNoise(node) || (bare && isMissingTemplate(node))) return '';
  if (node.name === 'br') return '\n';
  return node.children.map((child) => proseText(child, bare)).join('');
}

function linksIn(node: AnyNode, resolve: LinkResolver): Link[] {
  const links: Link[] = [];
  const walk = (n: AnyNode) => {
    if (!isElement(n) || isNoise(n)) return;
    if (n.name === 'a' && n.attribs.href) {
      links.push({ url: resolve(n.attribs.href), text: proseText(n) });
      return;
    }
    n.children.forEach(walk);
  };
  walk(node);
  return links;
}

function imagesIn(node: AnyNode, resolve: LinkResolver): Image[] {
  return DomUtils.findAll((el) => el.name === 'img' && !!el.attribs.src, [node]).map((img) => ({
    content_url: resolve(img.attribs.src!),
    ...(img.attribs.width ? { width: Number(img.attribs['data-file-width'] ?? img.attribs.width) } : {}),
    ...(img.attribs.height ? { height: Number(img.attribs['data-file-height'] ?? img.attribs.height) } : {}),
    ...(img.attribs.alt ? { alternative_text: img.attribs.alt } : {}),
  }));
}

/** Parentheses left empty once what they held is left out (a pronunciation from a missing template). */
const EMPTY_PARENS = / ?\((?:[\s,;]*)\)/g;
const clean = (text: string) => text.replace(/[ \t\u00a0]+/g, ' ').replace(/ *\n */g, '\n').trim();

function paragraph(el: Element, resolve: LinkResolver): Part {
  return { type: 'paragraph', value: clean(proseText(el)), links: linksIn(el, resolve) };
}

function list(el: Element, resolve: LinkResolver): Part {
  return {
    type: 'list',
    has_parts: el.children.filter(isElement).filter((li) => li.name === 'li' || li.name === 'dd' || li.name === 'dt').map((li) => ({ type: 'list_item', value: clean(proseText(li)), links: linksIn(li, resolve) })),
  };
}

/**
 * A section's parts in order: paragraphs, lists, and its subsections (Parsoid nests a heading's
 * `<section>` in its parent's). Tables, infoboxes, figures and reference lists are not prose; a
 * wrapper (a div, a section without a heading) gives its own parts in its place.
 */
function partsOf(container: Element, resolve: LinkResolver): Part[] {
  const parts: Part[] = [];
  for (const child of container.children) {
    if (!isElement(child) || isNoise(child) || isAside(child) || HEADING.test(child.name)) continue;
    if (child.name === 'p') {
      const p = paragraph(child, resolve);
      if (p.value) parts.push(p);
    } else if ((child.name === 'ul' || child.name === 'ol' || child.name === 'dl') && !hasClass(child, 'mw-references')) {
      parts.push(list(child, resolve));
    } else if (child.name === 'section') {
      const heading = child.children.find(isElement);
      if (heading && HEADING.test(heading.name)) parts.push({ type: 'section', name: clean(proseText(heading)), has_parts: partsOf(child, resolve) });
      else parts.push(...partsOf(child, resolve));
    } else if (child.name === 'div' || child.name === 'blockquote' || child.name === 'center') {
      parts.push(...partsOf(child, resolve));
    }
  }
  return parts;
}

/** An infobox (a table the HTML marks `infobox`): its rows with a header and a value as fields. */
function infobox(table: Element, resolve: LinkResolver, name: string): Part {
  const fields: Part[] = [];
  for (const row of DomUtils.findAll((el) => el.name === 'tr', [table])) {
    const cells = row.children.filter(isElement);
    const header = cells.find((c) => c.name === 'th');
    const value = cells.find((c) => c.name === 'td');
    if (!header || !value) continue;
    const values = DomUtils.findAll((el) => el.name === 'li', [value]).map((li) => clean(proseText(li))).filter(Boolean);
    const images = imagesIn(value, resolve);
    fields.push({
      type: 'field', name: clean(proseText(header)), value: clean(proseText(value)),
      ...(values.length ? { values } : {}), links: linksIn(value, resolve), ...(images.length ? { images } : {}),
    });
  }
  return { name, type: 'infobox', has_parts: fields };
}

/** The template an infobox was made by, as Parsoid's data-mw names it (else its caption). */
function infoboxName(table: Element, dataMw: Record<string, unknown>): string {
  const about = table.attribs.about;
  const mw = (table.attribs['data-mw'] ? JSON.parse(table.attribs['data-mw']) : about && table.attribs.id ? dataMw[table.attribs.id] : undefined) as { parts?: { template?: { target?: { wt?: string } } }[] } | undefined;
  const template = mw?.parts?.find((p) => p.template)?.template?.target?.wt?.trim();
  if (template) return template;
  const caption = DomUtils.findOne((el) => el.name === 'caption', [table]);
  return caption ? clean(proseText(caption)) : '';
}

function references(doc: AnyNode[], resolve: LinkResolver): Reference[] {
  const refs: Reference[] = [];
  for (const ol of DomUtils.findAll((el) => el.name === 'ol' && hasClass(el, 'mw-references'), doc)) {
    const group = ol.attribs['data-mw-group'];
    for (const li of ol.children.filter(isElement).filter((c) => c.name === 'li')) {
      const text = DomUtils.findOne((el) => hasClass(el, 'mw-reference-text'), [li]) ?? li;
      refs.push({ identifier: li.attribs.id ?? '', ...(group ? { group } : {}), text: { value: clean(proseText(text)), links: linksIn(text, resolve) } });
    }
  }
  return refs;
}

/**
 * Made by templates alone (hatnotes, maintenance tags, an infobox that did not become a table):
 * every element a transclusion's (Parsoid's `about` group), no text of the page's own.
 */
function templateOnly(p: Element): boolean {
  return p.children.every((c) => (c.type === 'text' ? !(c as unknown as { data: string }).data.trim() : isElement(c) && (c.attribs.about ?? '').startsWith('#mwt')));
}

/** A paragraph of the section's own prose: not inside a table, infobox, hatnote or figure. */
function inProse(p: Element, section: Element): boolean {
  for (let at = p.parent; at && at !== section; at = at.parent) if (isElement(at as AnyNode) && (isAside(at as Element) || isNoise(at as Element))) return false;
  return true;
}

/** What comes before the first heading of HTML without Parsoid's sections, as one element (none if nothing does). */
function leadWithoutSections(body: Element): Element | undefined {
  if (body.children.some((c) => isElement(c) && c.name === 'section')) return undefined;
  const first = body.children.findIndex((c) => isElement(c) && HEADING.test(c.name));
  const children = first < 0 ? body.children : body.children.slice(0, first);
  if (!children.length) return undefined;
  // A view of those nodes, not their parent: they stay the body's.
  const lead = new Element('div', {}, []);
  lead.children = children;
  return lead;
}

/**
 * A render's structure as Enterprise gives it: the abstract (the lead section's paragraphs, plain
 * text, without references, infoboxes, hatnotes, tables or coordinates), its first image, the
 * heading tree with each paragraph's text and links, infoboxes and references. `dataMw`: the
 * render's data-mw by element id (Parsoid may keep it beside the HTML).
 */
export function htmlStructure(html: string, resolve: LinkResolver, dataMw: Record<string, unknown> = {}): HtmlStructure {
  const doc = parseDocument(html);
  const body = DomUtils.findOne((el) => el.name === 'body', doc.children) ?? (doc as unknown as Element);
  // The lead: Parsoid's section 0, or (HTML without sections) what comes before the first heading.
  const lead = body.children.filter(isElement).find((el) => el.name === 'section' && el.attribs['data-mw-section-id'] === '0') ?? leadWithoutSections(body);
  const leadParts = lead ? partsOf(lead, resolve) : [];
  const abstract = (lead ? DomUtils.findAll((el) => el.name === 'p', [lead]).filter((p) => inProse(p, lead) && !templateOnly(p)) : []).map((p) => clean(proseText(p, true)).replace(EMPTY_PARENS, '')).filter(Boolean).join('\n');
  const leadImage = lead ? imagesIn(lead, resolve).find((img) => !img.width || img.width >= 50) : undefined;
  // The lead is Enterprise's section "Abstract"; the others follow in order, nested by level.
  const sections: Part[] = [];
  if (leadParts.length) sections.push({ type: 'section', name: 'Abstract', has_parts: leadParts });
  const rest = body.children.filter((c) => c !== lead && !lead?.children.includes(c));
  for (const part of partsOf({ ...body, children: rest } as Element, resolve)) {
    if (part.type === 'section') sections.push(part);
    else if (sections.length) sections.at(-1)!.has_parts!.push(part);
    else sections.push({ type: 'section', name: 'Abstract', has_parts: [part] });
  }
  const infoboxes = DomUtils.findAll((el) => el.name === 'table' && hasClass(el, 'infobox'), body.children).map((t) => infobox(t, resolve, infoboxName(t, dataMw)));
  return { abstract, ...(leadImage ? { leadImage } : {}), sections, infoboxes, references: references(body.children, resolve) };
}

/** The abstract alone (what every record carries): the same as `htmlStructure`'s. */
export function abstractOf(html: string): { abstract: string; leadImage?: Image } {
  // Only the lead is read: Parsoid's HTML is cut where its first section after the lead begins
  // (a long article's lead is a few percent of it, and parsing is nearly all of the work).
  const next = html.indexOf('<section data-mw-section-id="1"');
  const { abstract, leadImage } = htmlStructure(next > 0 ? html.slice(0, next) : html, (href) => href);
  return { abstract, ...(leadImage ? { leadImage } : {}) };
}
