import type { SiteInfo } from '../../upstream/action-api-types.js';

/** Enterprise's snapshot namespaces: articles, files, templates, categories. */
const SNAPSHOT_NAMESPACES = [0, 6, 10, 14];

/** The project type a wiki's id names after its language (`enwiktionary`: wiktionary); a wiki outside Wikimedia's naming is a `wiki`. */
function codeOf(wikiid: string, lang: string): string {
  const rest = wikiid.startsWith(lang.replace(/-/g, '_')) ? wikiid.slice(lang.length) : '';
  return /^[a-z]+$/.test(rest) ? rest : 'wiki';
}

/** A language as Enterprise describes one: its code, its English name, its own name, its direction. */
function languageOf(info: SiteInfo): Record<string, string> {
  const lang = info.general.lang;
  const named = (locale: string) => {
    try {
      return new Intl.DisplayNames([locale], { type: 'language' }).of(lang);
    } catch {
      return undefined;
    }
  };
  const name = named('en');
  const own = named(lang);
  return { identifier: lang, ...(name ? { name } : {}), ...(own ? { alternate_name: own } : {}), direction: info.general.rtl === undefined || info.general.rtl === false ? 'ltr' : 'rtl' };
}

/**
 * What Enterprise's metadata routes say of this wiki, one project: its project, its language, its
 * project code, and the namespaces snapshots are offered for (Enterprise's four), named as the
 * wiki names them. Enterprise's clients read these to find the identifiers the other routes take.
 */
export function metadataOf(info: SiteInfo): { projects: Record<string, unknown>[]; languages: Record<string, unknown>[]; codes: Record<string, unknown>[]; namespaces: Record<string, unknown>[] } {
  const general = info.general as { wikiid?: string; sitename?: string; server?: string; lang: string };
  const wikiid = general.wikiid ?? 'wiki';
  const language = languageOf(info);
  const code = codeOf(wikiid, general.lang);
  const namespaces = SNAPSHOT_NAMESPACES.flatMap((id) => {
    const ns = info.namespaces[String(id)] as { name?: string; canonical?: string } | undefined;
    if (!ns) return [];
    return [{ identifier: id, name: id === 0 ? 'Article' : ns.canonical ?? ns.name ?? String(id), ...(id === 0 ? {} : { description: ns.name ?? '' }) }];
  });
  return {
    projects: [{ name: general.sitename ?? wikiid, identifier: wikiid, url: (general.server ?? '').replace(/^\/\//, 'https://'), code, in_language: { identifier: language.identifier } }],
    languages: [language],
    codes: [{ identifier: code, name: general.sitename ?? code, description: general.sitename ?? code }],
    namespaces,
  };
}
