import type { WikiConfig } from '../config.js';

/** One entry of the config's `wikis:`: a domain, or a pattern of domains whose URLs are templates. */
export interface WikiEntry {
  /** As written in the config: `en.wikipedia.org`, or `*.farm.example`. */
  key: string;
  pattern: boolean;
  config: WikiConfig;
  /** The storage group its wikis' rows live in (storage-groups.ts); none: tables of their own. */
  group: string | undefined;
}

/** Requests under way at once to one wiki of a pattern, unless its entry says otherwise. */
export const FARM_WIKI_CONCURRENCY = 8;

/** One DNS label, as host names are written (lower case: a wiki has one name, not one per spelling). */
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * The config's wikis, by name and by pattern: which entry serves a domain (a name wins over a
 * pattern; of two patterns, the longer suffix), and that wiki's settings with its templates
 * filled in (`{domain}`: the whole host name; `{label}`: the label the `*` matched).
 */
export class WikiEntries {
  private readonly exact = new Map<string, WikiEntry>();
  /** Patterns by suffix (`.farm.example`), longest first. */
  private readonly patterns: { suffix: string; entry: WikiEntry }[] = [];

  constructor(wikis: Record<string, WikiConfig>) {
    for (const [key, config] of Object.entries(wikis)) {
      const pattern = key.startsWith('*.');
      const entry: WikiEntry = { key, pattern, config, group: config.storage_group ?? (pattern ? key.slice(2) : undefined) };
      if (pattern) this.patterns.push({ suffix: key.slice(1).toLowerCase(), entry });
      else this.exact.set(key, entry);
    }
    this.patterns.sort((a, b) => b.suffix.length - a.suffix.length);
  }

  /** The domain each pattern's storage group keeps its own rows under (see groupHomes), by group. */
  homeOfGroup(group: string): string | undefined {
    return groupHomes(Object.fromEntries(this.patterns.map(({ entry }) => [entry.key, entry.config])), group)[0];
  }

  /** The domains listed by name. */
  listed(): string[] {
    return [...this.exact.keys()];
  }

  /** Whether any entry is a pattern (the service then serves wikis it finds on first use). */
  get hasPatterns(): boolean {
    return this.patterns.length > 0;
  }

  /** The entry serving `domain` and the label its pattern matched, if any entry does. */
  match(domain: string): { entry: WikiEntry; label?: string } | undefined {
    const entry = this.exact.get(domain);
    if (entry) return { entry };
    for (const { suffix, entry: patterned } of this.patterns) {
      if (!domain.endsWith(suffix)) continue;
      const label = domain.slice(0, -suffix.length);
      if (LABEL.test(label)) return { entry: patterned, label };
    }
    return undefined;
  }

  /** `domain`'s settings, its templates filled in; undefined for a domain no entry serves. */
  configOf(domain: string): WikiConfig | undefined {
    const found = this.match(domain);
    if (!found) return undefined;
    const fill = (text: string) => text.replaceAll('{domain}', domain).replaceAll('{label}', found.label ?? '');
    const { config } = found.entry;
    return {
      // Each wiki of a pattern its own bound on requests under way (see WikiConfig.concurrency).
      ...(found.entry.pattern ? { concurrency: FARM_WIKI_CONCURRENCY } : {}),
      ...config,
      action_api: fill(config.action_api),
      rest_api: fill(config.rest_api),
      ...(config.parsoid_domain === undefined ? {} : { parsoid_domain: fill(config.parsoid_domain) }),
    };
  }
}

/** The label of the wiki a pattern's storage group is set up with at start (its tables only: it is never served as a wiki). */
const GROUP_SETUP_LABEL = 'wikistore-group-tables';

/** For each storage group of a pattern, a domain of it: set up at start, so its tables exist before any wiki of it is found. */
export function groupHomes(wikis: Record<string, WikiConfig>, only?: string): string[] {
  const homes = new Map<string, string>();
  for (const key of Object.keys(wikis)) {
    if (!key.startsWith('*.')) continue;
    const group = wikis[key]!.storage_group ?? key.slice(2);
    if (!homes.has(group) && (only === undefined || only === group)) homes.set(group, `${GROUP_SETUP_LABEL}${key.slice(1)}`);
  }
  return [...homes.values()];
}
