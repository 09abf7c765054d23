import { notFound } from '../util/errors.js';
import type { Wiki } from './wiki.js';

/**
 * The wikis the service serves, by domain: the one way the code below the app finds a wiki (a
 * farm's, found by pattern, as well as one listed in the config).
 */
export interface WikiDirectory {
  /** The wiki of a served domain; a 404 for another (requests reach handlers for served domains only). */
  of(domain: string): Wiki;
  /** The domains served by name. */
  domains(): string[];
}

/** The wikis listed in the config. */
export class ListedWikis implements WikiDirectory {
  constructor(private readonly byDomain: ReadonlyMap<string, Wiki>) {}

  of(domain: string): Wiki {
    const wiki = this.byDomain.get(domain);
    if (!wiki) throw notFound(`Domain '${domain}' is not served here.`, 'unknown-domain');
    return wiki;
  }

  domains(): string[] {
    return [...this.byDomain.keys()];
  }
}
