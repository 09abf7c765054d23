import type { SiteInfo } from '../../../upstream/action-api-types.js';
import type { RevisionRow } from '../model/revision.js';
import { titleSegment } from '../model/title-url.js';

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

/** An SPDX-style identifier for the licenses wikis commonly name, as Enterprise gives it. */
function licenseIdentifier(name: string, url: string): string {
  const text = `${name} ${url}`.toLowerCase();
  const version = /(\d\.\d)/.exec(text)?.[1];
  if (/by-sa|attribution[- ]share ?alike/.test(text)) return `CC-BY-SA-${version ?? '4.0'}`;
  if (/publicdomain|cc0/.test(text)) return 'CC0-1.0';
  if (/gfdl|gnu free documentation/.test(text)) return 'GFDL-1.3';
  return name;
}

/** A record's `article_body`: the render's HTML (2.x) and the revision's wikitext. */
export interface ArticleBody {
  html: string;
  wikitext: string;
}

/**
 * One page as a line of a Wikimedia Enterprise HTML snapshot (its data dictionary's field names),
 * with what the service stores: the revision current at the snapshot's time, its render's HTML
 * and its wikitext (`body`, or what stands for it; `wikitextBytes` its size). Hidden user or
 * comment are left out (`visibility` says so); fields the service does not know (categories,
 * templates, redirects, abstracts, scores) are absent.
 */
export function enterpriseRecord(row: RevisionRow, text: string, ns: number, facts: WikiFacts, body: ArticleBody | null, wikitextBytes: number, eventTime: string): Record<string, unknown> {
  const url = `${facts.server}${facts.articlePath.replace('$1', titleSegment(row.title))}`;
  return {
    name: text,
    identifier: row.page_id,
    date_modified: row.timestamp,
    version: {
      identifier: row.rev,
      ...(row.comment_hidden ? {} : { comment: row.comment ?? '' }),
      tags: row.tags ?? [],
      is_minor_edit: !!row.minor,
      ...(row.user_hidden ? {} : { editor: { identifier: row.user_id ?? 0, name: row.user_text ?? '', is_anonymous: !row.user_id } }),
      size: { value: row.size ?? wikitextBytes, unit_text: 'B' },
    },
    ...(row.parent_id ? { previous_version: { identifier: row.parent_id } } : {}),
    url,
    namespace: { identifier: ns },
    in_language: { identifier: facts.language },
    is_part_of: { identifier: facts.id, url: facts.server },
    license: facts.license.name || facts.license.url ? [{ name: facts.license.name, identifier: licenseIdentifier(facts.license.name, facts.license.url), url: facts.license.url }] : [],
    visibility: { text: true, editor: !row.user_hidden, comment: !row.comment_hidden },
    event: { type: 'update', date_created: eventTime },
    // Last: what a reader streaming the line meets after every other field (and what a snapshot
    // copies as stored, see record-format.ts).
    article_body: body,
  };
}
