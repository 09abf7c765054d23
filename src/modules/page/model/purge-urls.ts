import { PROPS } from './render.js';

import { surrogateKeys } from './surrogate-keys.js';
import { titleSegment } from './title-url.js';

/** The forms of a page or revision in MediaWiki's REST API (rest.php/v1): source, bare, HTML, both. */
const REST_PHP_FORMS = ['', '/bare', '/html', '/with_html'];

/** A page's forms in MediaWiki's REST API, under its title's both spellings served (underscores, and spaces as MediaWiki links to it). */
function restPhpPageUrls(domain: string, t: string): string[] {
  const spellings = t.includes('_') ? [t, t.replace(/_/g, '%20')] : [t];
  return spellings.flatMap((spelling) => REST_PHP_FORMS.map((form) => `/${domain}/rest.php/v1/page/${spelling}${form}`));
}

/** Every URL whose answer changes with a page's latest revision: what HTTP caches must forget. */
function latestUrls(domain: string, title: string): string[] {
  const t = titleSegment(title);
  const page = `/${domain}/v1/page/${t}`;
  return [
    `/${domain}/v1/page/`,
    `${page}/`,
    `${page}/rev/`,
    ...PROPS.flatMap((prop) => [`${page}/${prop}`, `${page}/${prop}/`]),
    `${page}/display`,
    `${page}/html?data-mw=inline`,
    `/${domain}/rest_v1/page/html/${t}`,
    `/${domain}/rest_v1/page/title/${t}`,
    `/${domain}/rest_v1/page/summary/${t}`,
    ...restPhpPageUrls(domain, t),
  ];
}

/** The URLs of one revision and its render: what caches must forget when it stops being servable. */
function revisionUrls(domain: string, title: string, rev: number, tid: string | null): string[] {
  const t = titleSegment(title);
  const page = `/${domain}/v1/page/${t}`;
  const ids = tid ? [String(rev), tid] : [String(rev)];
  return [
    `${page}/rev/${rev}`,
    `/${domain}/v1/revision/${rev}`,
    ...PROPS.flatMap((prop) => ids.map((id) => `${page}/${prop}/${id}`)),
    `/${domain}/rest_v1/page/html/${t}/${rev}`,
    ...(tid ? [`/${domain}/rest_v1/page/html/${t}/${rev}/${tid}`] : []),
    ...REST_PHP_FORMS.map((form) => `/${domain}/rest.php/v1/revision/${rev}${form}`),
  ];
}

/** What caches must forget: URLs (for caches without surrogate keys) and keys (every URL form at once). */
export interface Purge {
  urls: string[];
  keys: string[];
}

/** The page's latest revision changed. */
export const latestPurge = (domain: string, title: string): Purge => ({ urls: latestUrls(domain, title), keys: [surrogateKeys.latest(domain, title)] });

/** A page the page links to changed (created, deleted, moved): its display HTML marks the link anew. */
export const displayPurge = (domain: string, title: string): Purge => ({
  urls: [`/${domain}/v1/page/${titleSegment(title)}/display`],
  keys: [surrogateKeys.display(domain, title)],
});

/** A revision stopped (or started) being servable: hidden, shown, gone. */
export const revisionPurge = (domain: string, title: string, rev: number, tid: string | null): Purge => ({
  urls: revisionUrls(domain, title, rev, tid),
  keys: [surrogateKeys.revision(domain, rev)],
});

/** Everything answered under a title: its page was deleted or moved away. */
export const pagePurge = (domain: string, title: string, current?: { rev: number; tid: string | null }): Purge => ({
  urls: [...latestUrls(domain, title), ...(current ? revisionUrls(domain, title, current.rev, current.tid) : [])],
  keys: [surrogateKeys.page(domain, title), surrogateKeys.latest(domain, title)],
});
