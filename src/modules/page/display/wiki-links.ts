import { DomUtils } from 'htmlparser2';
import type { Document, Element } from 'domhandler';

/** An internal link of a render: Parsoid's `<a rel="mw:WikiLink" href="./Title#fragment">`. */
export interface WikiLink {
  element: Element;
  /** The linked page's title as the service keeps titles (underscores, as in Parsoid's hrefs). */
  target: string;
  fragment?: string;
}

const isWikiLink = (e: Element) => e.name === 'a' && /(^|\s)mw:WikiLink(\s|$)/.test(e.attribs.rel ?? '');

/**
 * The internal links of a document, each to a page title: hrefs of the form `./Title` (Parsoid
 * writes them relative to the article path, already normalised), or a red link's edit URL;
 * links with another query string (an action) and interwiki links are not page links here.
 */
export function wikiLinks(doc: Document): WikiLink[] {
  const links: WikiLink[] = [];
  for (const element of DomUtils.findAll(isWikiLink, doc.children)) {
    // A red link's edit URL still names its page; any other query is an action, not a page link.
    const href = element.attribs.href?.replace(/\?action=edit&redlink=1(?=#|$)/, '');
    if (!href?.startsWith('./') || href.includes('?')) continue;
    const hash = href.indexOf('#');
    const path = hash < 0 ? href.slice(2) : href.slice(2, hash);
    if (!path) continue;
    let target: string;
    try {
      target = decodeURIComponent(path);
    } catch {
      continue; // not a title Parsoid wrote
    }
    links.push(hash < 0 ? { element, target } : { element, target, fragment: href.slice(hash + 1) });
  }
  return links;
}

/** A title as a path segment of Parsoid's relative hrefs (`./Title`). */
export const hrefOf = (title: string) => `./${encodeURIComponent(title.replace(/ /g, '_')).replace(/%2F/g, '/').replace(/%3A/g, ':')}`;

/** A title as readers see it (spaces). */
export const textOf = (title: string) => title.replace(/_/g, ' ');
