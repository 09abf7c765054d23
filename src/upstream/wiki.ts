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
    const siteInfo = await this.rules();
    try {
      return Title.newFromText(text, siteInfo).getPrefixedDBKey();
    } catch (e) {
      throw badRequest(`'${text.slice(0, 200)}' is not a valid title: ${(e as Error).message}`, 'invalid-title');
    }
  }
}
