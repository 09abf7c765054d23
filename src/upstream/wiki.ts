import { LRUCache } from 'lru-cache';
import { Title } from 'mediawiki-title';
import type { WikiConfig } from '../config.js';
import { badRequest } from '../errors.js';
import type { Metrics } from '../metrics.js';
import { ActionApi, type SiteInfo } from './action-api.js';
import { ParsoidClient } from './parsoid.js';

/** One wiki: its Action API, its Parsoid, and its title rules (site info, fetched once). */
export class Wiki {
  readonly api: ActionApi;
  readonly parsoid: ParsoidClient;
  private siteInfo: Promise<SiteInfo> | undefined;
  /** Normalizing is pure given the site info and costs more than the rest of a stored read. */
  private readonly normalized = new LRUCache<string, string>({ max: 20_000 });

  constructor(readonly domain: string, config: WikiConfig, userAgent: string, metrics: Metrics) {
    const count = (endpoint: string) => metrics.wikiRequests.inc({ domain, endpoint });
    this.api = new ActionApi(config.action_api, userAgent, count);
    const parsoidDomain = config.parsoid_domain ?? new URL(config.rest_api).hostname;
    this.parsoid = new ParsoidClient(config.rest_api.replace(/\/$/, ''), parsoidDomain, userAgent, count);
  }

  private rules(): Promise<SiteInfo> {
    if (!this.siteInfo) {
      this.siteInfo = this.api.siteInfo();
      // A failed fetch is not cached: the next request tries again.
      this.siteInfo.catch(() => (this.siteInfo = undefined));
    }
    return this.siteInfo;
  }

  /** The title as the wiki stores it (prefixed DB key, e.g. `Talk:Main_Page`). */
  async normalize(text: string): Promise<string> {
    const cached = this.normalized.get(text);
    if (cached !== undefined) return cached;
    const siteInfo = await this.rules();
    try {
      const key = Title.newFromText(text, siteInfo).getPrefixedDBKey();
      this.normalized.set(text, key);
      return key;
    } catch (e) {
      throw badRequest(`'${text.slice(0, 200)}' is not a valid title: ${(e as Error).message}`, 'invalid-title');
    }
  }
}
