import type { SiteInfo } from '../../upstream/action-api-types.js';
import { type RevisionRow } from '../../modules/page/door.js';

/** PHP's rawurlencode, as MediaWiki's REST router spells a path parameter in the URLs it gives. */
export const rawUrlEncode = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * A title's DB key as MediaWiki spells it in the `Location` of a page it created: escaped as PHP's
 * urlencode, then `;@$!*(),~:` given back as MediaWiki's wfUrlencode does (`/` stays escaped).
 */
export const titleStyleEncode = (dbKey: string) =>
  encodeURIComponent(dbKey).replace(/'/g, '%27').replace(/%(3B|40|24|2C|3A)/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));

/** The wiki's own URL of a route of its REST API (what MediaWiki puts in `html_url`). */
export function wikiRestUrl(info: SiteInfo, route: string): string {
  const general = info.general as { server?: string; scriptpath?: string };
  const server = (general.server ?? '').replace(/^\/\//, 'https://');
  return `${server}${general.scriptpath ?? ''}/rest.php/v1${route}`;
}

/** MediaWiki's timestamps: ISO 8601 to the second. */
const isoSeconds = (timestamp: string | null) => (timestamp ? new Date(timestamp).toISOString().replace(/\.\d{3}Z$/, 'Z') : null);

const license = (info: SiteInfo) => ({ url: info.rightsinfo?.url ?? '', title: info.rightsinfo?.text ?? '' });

/** A page as MediaWiki's `page/{title}` routes describe it (`bare` without `html_url`). */
export function pageObject(row: RevisionRow, text: string, info: SiteInfo): Record<string, unknown> {
  return {
    id: row.page_id,
    key: row.title,
    title: text,
    latest: { id: row.rev, timestamp: isoSeconds(row.timestamp) },
    content_model: row.content_model ?? 'wikitext',
    license: license(info),
  };
}

/**
 * A revision as MediaWiki's `revision/{id}` routes describe it; hidden user or comment are null,
 * and so is `delta` of a page's first revision (no parent), as MediaWiki answers.
 */
export function revisionObject(row: RevisionRow, text: string, info: SiteInfo, parentSize: number | null | undefined): Record<string, unknown> {
  const delta = row.size !== null && parentSize !== undefined && parentSize !== null ? row.size - parentSize : null;
  return {
    id: row.rev,
    size: row.size,
    minor: !!row.minor,
    timestamp: isoSeconds(row.timestamp),
    content_model: row.content_model ?? 'wikitext',
    page: { id: row.page_id, key: row.title, title: text },
    license: license(info),
    user: row.user_hidden ? null : { id: row.user_id || null, name: row.user_text },
    comment: row.comment_hidden ? null : row.comment,
    delta,
  };
}
