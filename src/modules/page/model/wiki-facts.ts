import type { SiteInfo } from '../../../upstream/action-api-types.js';

/** What the wiki says of itself that every record of a snapshot carries. */
export interface WikiFacts {
  /** The wiki's id (`wikiid`, e.g. enwiki): Enterprise's `is_part_of.identifier`. */
  id: string;
  server: string;
  articlePath: string;
  language: string;
  license: { name: string; url: string };
}

export function wikiFacts(info: SiteInfo): WikiFacts {
  const general = info.general as { wikiid?: string; server?: string; articlepath?: string; lang: string };
  return {
    id: general.wikiid ?? 'wiki',
    server: (general.server ?? '').replace(/^\/\//, 'https://'),
    articlePath: general.articlepath ?? '/wiki/$1',
    language: general.lang,
    license: { name: info.rightsinfo?.text ?? '', url: info.rightsinfo?.url ?? '' },
  };
}

/**
 * What a record says of a page gone or hidden, with no text: its name, namespace and wiki, and
 * the event (a deletion or a visibility change), as Enterprise's Realtime and its batches carry it.
 */
export function goneRecord(name: string, ns: number, facts: WikiFacts, event: Record<string, unknown>, rev?: number): Record<string, unknown> {
  return {
    name,
    ...(rev !== undefined ? { version: { identifier: rev } } : {}),
    namespace: { identifier: ns },
    in_language: { identifier: facts.language },
    is_part_of: { identifier: facts.id, url: facts.server },
    event,
  };
}
