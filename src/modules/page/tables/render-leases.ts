import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { keepRenewed, LeaseTable } from '../../../table-access/lease.js';
import type { RequestContext } from '../../../router/types.js';

/** Short, and renewed while a render runs: a process that dies mid-render holds up others this long at most. */
const LEASE_SECONDS = 10;
/** How often a process that found the render taken looks for it in storage. */
const POLL_MS = 50;

const RENDER_LEASES_SCHEMA = {
  version: 1,
  attributes: { key: 'string', holder: 'string' },
  index: [{ attribute: 'key', type: 'hash' }],
};

/**
 * One render of a revision at a time across every process sharing the storage (workers of one
 * machine, or several machines): in-process coalescing joins the requests of one process; this
 * lease makes the processes take turns, so N workers missing the same revision at once still make
 * one Parsoid request. Whoever does not get the lease waits for the render to appear in storage.
 * A wiki's revision ids are unique, so the id is the key.
 */
export class RenderLeases {
  private readonly leases: LeaseTable;

  constructor(domain: string, private readonly log: Logger) {
    this.leases = new LeaseTable(domain, 'page_render_leases');
  }

  async create(ctx: RequestContext): Promise<void> {
    await this.leases.table.create(ctx, RENDER_LEASES_SCHEMA);
  }

  /**
   * `make` under the lease of `key`, or, when another process held it, what `stored` finds once
   * that process is done. A lease whose holder died expires and is taken over.
   */
  async once<T extends { stored: Promise<void> }>(ctx: RequestContext, key: string, make: () => Promise<T>, stored: () => Promise<T | undefined>): Promise<T> {
    const holder = randomUUID();
    for (let waited = false; ; waited = true) {
      let leased: boolean;
      try {
        leased = await this.leases.acquire(ctx, key, holder, LEASE_SECONDS);
      } catch (err) {
        // The lease only saves duplicate work: storage failing to grant it is no reason to fail a read.
        this.log.warn({ err, key }, 'taking a render lease failed; rendering without it');
        return make();
      }
      // After a wait, the lease may have been freed by a process that has just stored the render.
      if (leased) return this.underLease(ctx, key, holder, make, waited ? stored : undefined);
      await sleep(POLL_MS);
      const found = await stored();
      if (found) return found;
    }
  }

  /** Runs `make` holding the lease (renewed meanwhile) until what it made is stored, or fails to be. */
  private async underLease<T extends { stored: Promise<void> }>(ctx: RequestContext, key: string, holder: string, make: () => Promise<T>, storedFirst?: () => Promise<T | undefined>): Promise<T> {
    const stop = keepRenewed(LEASE_SECONDS * 1000, () => this.leases.renew(ctx, key, holder, LEASE_SECONDS), (err) => this.log.warn({ err, key }, 'renewing a render lease failed'));
    const release = () => {
      stop();
      return this.leases.release(ctx, key, holder).catch((err) => this.log.warn({ err, key }, 'releasing a render lease failed'));
    };
    try {
      const found = await storedFirst?.();
      if (found) {
        await release();
        return found;
      }
      const made = await make();
      // Released once stored, or once storing failed (its caller reports that; this must not rethrow it).
      void made.stored.then(release, release);
      return made;
    } catch (e) {
      await release();
      throw e;
    }
  }
}
