import { titleSegment } from './title-url.js';

/**
 * Surrogate keys (Varnish's xkey) that tag each cached answer with what it depends on, so one
 * purge reaches every URL form of it: any spelling, query string or API surface.
 * Keys are ASCII without spaces (xkey separates them by spaces).
 */
export const surrogateKeys = {
  /** Everything answered about a title: purged when the page is deleted or moved away. */
  page: (domain: string, title: string) => `p:${domain}:${titleSegment(title)}`,
  /** What changes with the title's latest revision. */
  latest: (domain: string, title: string) => `l:${domain}:${titleSegment(title)}`,
  /** Every display HTML of a wiki: purged when its bad image list changes. */
  displays: (domain: string) => `D:${domain}`,
  /** The page's display HTML (any revision): purged when a page it links to changes. */
  display: (domain: string, title: string) => `d:${domain}:${titleSegment(title)}`,
  /** One revision's content and metadata, under any title: purged when it is hidden or shown. */
  revision: (domain: string, rev: number) => `r:${domain}:${rev}`,
};

/** The keys of a page's content: its page, and its latest revision or the one revision it is of. */
export function contentKeys(domain: string, title: string, rev: number, latest: boolean): string[] {
  return [surrogateKeys.page(domain, title), latest ? surrogateKeys.latest(domain, title) : surrogateKeys.revision(domain, rev)];
}

/** The header that carries the keys; added to (not replacing) keys a handler set. */
export function tagged(headers: Record<string, string>, keys: string[]): Record<string, string> {
  return { ...headers, xkey: headers.xkey ? `${headers.xkey} ${keys.join(' ')}` : keys.join(' ') };
}
