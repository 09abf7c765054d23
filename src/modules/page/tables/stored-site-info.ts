import type { RequestContext } from '../../../router/types.js';
import type { SiteInfo } from '../../../upstream/action-api.js';
import type { ParsoidMode } from '../../../upstream/parsoid.js';
import type { SiteInfoStore } from '../../../upstream/wiki.js';
import { TableClient } from '../../../table-access/table-client.js';

const SITE_INFO_SCHEMA = {
  version: 1,
  attributes: { name: 'string', info: 'json', fetched: 'timestamp' },
  index: [{ attribute: 'name', type: 'hash' }],
};

/**
 * The wiki's site info (namespaces, title rules) in table storage, so a restarted process
 * normalises titles and serves stored pages while the wiki is down.
 */
export class StoredSiteInfo implements SiteInfoStore {
  readonly table: TableClient;

  constructor(domain: string, private readonly ctx: RequestContext) {
    this.table = new TableClient(domain, 'site_info');
  }

  async create(): Promise<void> {
    await this.table.create(this.ctx, SITE_INFO_SCHEMA);
  }

  async load(): Promise<{ info: SiteInfo; fetched: number } | undefined> {
    const [row] = (await this.table.query(this.ctx, { attributes: { name: 'siteinfo' } })).items;
    return row ? { info: row.info as SiteInfo, fetched: Date.parse(row.fetched as string) } : undefined;
  }

  async save(info: SiteInfo): Promise<void> {
    await this.table.put(this.ctx, { attributes: { name: 'siteinfo', info, fetched: Date.now() } });
  }

  async loadMode(): Promise<ParsoidMode | undefined> {
    const [row] = (await this.table.query(this.ctx, { attributes: { name: 'parsoid_mode' } })).items;
    const mode = (row?.info as { mode?: string } | undefined)?.mode;
    return mode === 'v3' || mode === 'core' ? mode : undefined;
  }

  async saveMode(mode: ParsoidMode): Promise<void> {
    await this.table.put(this.ctx, { attributes: { name: 'parsoid_mode', info: { mode }, fetched: Date.now() } });
  }
}
