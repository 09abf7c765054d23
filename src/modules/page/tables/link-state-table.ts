import type { RequestContext } from '../../../router/types.js';
import type { LinkTargetState } from '../../../upstream/action-api.js';
import { TableClient } from '../../../table-access/table-client.js';

const LINK_STATES_SCHEMA = {
  version: 1,
  attributes: { target: 'string', exists: 'boolean', redirect: 'boolean', disambiguation: 'boolean', length: 'long', ns: 'int', checked: 'timestamp' },
  index: [{ attribute: 'target', type: 'hash' }],
};

/** A link target's state as last asked of the wiki (or learned from its changes). */
export interface StoredLinkState extends LinkTargetState {
  checked: number;
}

/** The state of every page some stored page links to: what its links show (red, redirect, ...). */
export class LinkStateTable {
  readonly table: TableClient;

  constructor(domain: string) {
    this.table = new TableClient(domain, 'link_states');
  }

  async create(ctx: RequestContext): Promise<void> {
    await this.table.create(ctx, LINK_STATES_SCHEMA);
  }

  async get(ctx: RequestContext, target: string): Promise<StoredLinkState | undefined> {
    const [row] = (await this.table.query(ctx, { attributes: { target } })).items;
    if (!row) return undefined;
    return {
      title: target, exists: !!row.exists, redirect: !!row.redirect, disambiguation: !!row.disambiguation,
      length: (row.length as number | null) ?? null, ns: (row.ns as number | null) ?? 0, checked: Date.parse(row.checked as string),
    };
  }

  async put(ctx: RequestContext, state: LinkTargetState): Promise<void> {
    const { title, exists, redirect, disambiguation, length, ns } = state;
    await this.table.put(ctx, { attributes: { target: title, exists, redirect, disambiguation, length, ns, checked: Date.now() } });
  }
}
