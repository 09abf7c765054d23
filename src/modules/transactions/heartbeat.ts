import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { keepRenewed } from '../../table-access/lease.js';
import { TableClient } from '../../table-access/table-client.js';
import type { RequestContext } from '../../router/types.js';

const HEARTBEATS_SCHEMA = {
  version: 1,
  attributes: { owner: 'string', seen: 'timestamp' },
  index: [{ attribute: 'owner', type: 'hash' }],
};

/**
 * This process's heartbeat in one domain: a row that lives `leaseMs` unless renewed. Work a
 * process owns (a transaction) is taken over by another once its owner's row is gone.
 */
export class Heartbeat {
  readonly owner = `${process.pid}-${randomUUID()}`;
  private readonly table: TableClient;
  private stopRenewing: (() => void) | undefined;

  constructor(domain: string, private readonly leaseMs: number, private readonly log: Logger) {
    this.table = new TableClient(domain, 'heartbeats');
  }

  async create(ctx: RequestContext): Promise<void> {
    await this.table.create(ctx, HEARTBEATS_SCHEMA);
  }

  /** Its own row: nobody else writes it, so no condition is needed. */
  private async beat(ctx: RequestContext): Promise<boolean> {
    await this.table.put(ctx, { attributes: { owner: this.owner, seen: Date.now(), _ttl: Math.max(1, Math.ceil(this.leaseMs / 1000)) } });
    return true;
  }

  /** Beats now, then three times per lease. */
  async start(ctx: RequestContext): Promise<void> {
    await this.beat(ctx);
    this.stopRenewing = keepRenewed(this.leaseMs, () => this.beat(ctx), (err) => this.log.warn({ err }, 'heartbeat failed'));
  }

  stop(): void {
    this.stopRenewing?.();
  }

  /** Whether `owner`'s heartbeat is still alive. */
  async alive(ctx: RequestContext, owner: string): Promise<boolean> {
    if (owner === this.owner) return true;
    return (await this.table.query(ctx, { attributes: { owner } })).items.length > 0;
  }
}
