import type { WikiFacts } from '../model/wiki-facts.js';
import type { RevisionRow } from '../model/revision.js';
import { titleSegment } from '../model/title-url.js';
import { BoundedMap } from '../../../util/bounded-map.js';
import type { PageFacts } from '../../../upstream/page-facts.js';
import type { RenderFacts } from '../model/html-structure.js';

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

export type { RenderFacts } from '../model/html-structure.js';

/** What a record says of its page beside its revision and render. */
export interface RecordFacts {
  page?: PageFacts;
  render?: RenderFacts;
}

/** Groups whose rights Enterprise counts as advanced (beyond an administrator's). */
const ADVANCED_GROUPS = new Set(['bureaucrat', 'checkuser', 'oversight', 'suppress', 'interface-admin', 'steward']);

/** A URL the wiki's HTML names (`./Title`, `//host/path`, `/path`), absolute. */
export function absoluteUrl(facts: WikiFacts, href: string): string {
  if (href.startsWith('./')) return `${facts.server}${facts.articlePath.replace('$1', href.slice(2))}`;
  try {
    return new URL(href, `${facts.server}/`).toString();
  } catch {
    return href;
  }
}

const pageUrl = (facts: WikiFacts, title: string) => `${facts.server}${facts.articlePath.replace('$1', titleSegment(title.replace(/ /g, '_')))}`;
/**
 * Pages named in records (`{name, url}`), kept per wiki: the same templates and categories are
 * named by page after page of a snapshot, and their URLs were a tenth of a record's head. Looked
 * up by the name alone: a key joined with the wiki's server for each name cost a tenth of a
 * snapshot's time in making and hashing the joined string.
 */
const namedPages = new BoundedMap<string, BoundedMap<string, { name: string; url: string }>>(4);
const NAMED_PER_WIKI = 16_384;
function named(facts: WikiFacts, names: string[]): { name: string; url: string }[] {
  const wiki = namedPages.remember(`${facts.server}\u0000${facts.articlePath}`, () => new BoundedMap(NAMED_PER_WIKI));
  return names.map((name) => wiki.remember(name, () => ({ name, url: pageUrl(facts, name) })));
}

function editorOf(row: RevisionRow, page: PageFacts | undefined): Record<string, unknown> {
  const known = page?.rev === row.rev ? page.editor : undefined;
  const editor: Record<string, unknown> = { identifier: row.user_id ?? 0, name: row.user_text ?? '', is_anonymous: !row.user_id };
  if (!known) return editor;
  // A user's groups are a handful: looked up in the list itself, not in a set made for each record.
  const { groups } = known;
  editor.edit_count = known.editCount;
  editor.groups = groups;
  editor.is_bot = groups.includes('bot');
  editor.is_admin = groups.includes('sysop');
  editor.is_patroller = groups.includes('patroller') || known.rights.includes('patrol');
  editor.has_advanced_rights = groups.some((g) => ADVANCED_GROUPS.has(g));
  if (known.registration) editor.date_started = known.registration;
  return editor;
}

/** The record's lead image: the wiki's page image (PageImages), else the lead section's first. */
function imageOf(facts: WikiFacts, record: RecordFacts): Record<string, unknown> | undefined {
  const image = record.page?.image;
  if (image) return { content_url: image.url, width: image.width, height: image.height };
  const lead = record.render?.leadImage;
  return lead ? { content_url: absoluteUrl(facts, lead.src), ...(lead.width ? { width: lead.width } : {}), ...(lead.height ? { height: lead.height } : {}) } : undefined;
}

/**
 * One page as a line of a Wikimedia Enterprise HTML snapshot (its data dictionary's field names),
 * with what the service stores: the revision current at the snapshot's time, its render's HTML
 * and its wikitext (`body`, or what stands for it; `wikitextBytes` its size), and what the wiki
 * says of the page (`record.page`, asked in batches) and its render gives (`record.render`).
 * Hidden user or comment are left out (`visibility` says so); fields the wiki cannot give (scores,
 * watchers, Wikidata entities beyond the item) are absent.
 */
export function enterpriseRecord(row: RevisionRow, text: string, ns: number, facts: WikiFacts, body: ArticleBody | null, wikitextBytes: number, eventTime: string, record: RecordFacts = {}): Record<string, unknown> {
  const url = `${facts.server}${facts.articlePath.replace('$1', titleSegment(row.title))}`;
  const { page, render } = record;
  // What belongs to one revision (its editor, its parent) only from facts asked for it.
  const previous = page?.rev === row.rev ? page.previous : undefined;
  const image = imageOf(facts, record);
  return {
    name: text,
    identifier: row.page_id,
    ...(render ? { abstract: render.abstract } : {}),
    ...(page?.created ? { date_created: page.created } : {}),
    date_modified: row.timestamp,
    ...(previous ? { date_previously_modified: previous.timestamp } : {}),
    version: {
      identifier: row.rev,
      ...(row.comment_hidden ? {} : { comment: row.comment ?? '' }),
      tags: row.tags ?? [],
      is_minor_edit: !!row.minor,
      ...(row.user_hidden ? {} : { editor: editorOf(row, page) }),
      ...(render ? { number_of_characters: render.characters } : {}),
      size: { value: row.size ?? wikitextBytes, unit_text: 'B' },
    },
    ...(row.parent_id ? { previous_version: { identifier: row.parent_id, ...(previous ? { number_of_characters: previous.characters } : {}) } } : {}),
    url,
    namespace: { identifier: ns },
    in_language: { identifier: facts.language },
    ...(page?.wikidataItem ? { main_entity: { identifier: page.wikidataItem, url: `https://www.wikidata.org/entity/${page.wikidataItem}` } } : {}),
    is_part_of: { identifier: facts.id, url: facts.server },
    ...(page ? {
      categories: named(facts, page.categories.map((c) => c.name)),
      templates: named(facts, page.templates),
      redirects: named(facts, page.redirects),
      protection: page.protection,
      ...(page.description ? { description: page.description } : {}),
    } : {}),
    ...(image ? { image } : {}),
    license: facts.license.name || facts.license.url ? [{ name: facts.license.name, identifier: licenseIdentifier(facts.license.name, facts.license.url), url: facts.license.url }] : [],
    visibility: { text: true, editor: !row.user_hidden, comment: !row.comment_hidden },
    event: { type: 'update', date_created: eventTime },
    // Last: what a reader streaming the line meets after every other field (and what a snapshot
    // copies as stored, see record-format.ts).
    article_body: body,
  };
}
