import type { Logger } from 'pino';
import type { Metrics } from '../../util/metrics.js';
import { withBody } from '../../router/typed-body.js';
import type { Module, RequestContext } from '../../router/types.js';
import { TransactionExecutor, type KillPoint } from './executor.js';
import { Heartbeat } from './heartbeat.js';
import { TableClient } from '../../table-access/table-client.js';
import { transactionBody, transactionSpecs } from './spec.js';

export interface TransactionOptions {
  /** Whether a wiki is one of a farm's: its heartbeat beats only once it has had a transaction here. */
  isFarmed: (domain: string) => boolean;
  /** A farm's wiki's storage group's home (also the home's own), where the group's wikis with transactions are listed. */
  homeOf: (domain: string) => string | undefined;
  /** How long a process's heartbeat lives unless renewed: how soon others take over its work. */
  leaseMs: number;
  /** How often stored, unfinished transactions are looked for (0: never). */
  sweepMs: number;
  /** How long a tid is accepted and its result kept. */
  lifetimeMs: number;
  /** Tests only: die at this point of every transaction. */
  kill?: KillPoint;
  metrics: Metrics;
  log: Logger;
}

const TRANSACTION_WIKIS_SCHEMA = { version: 1, attributes: { wiki: 'string' }, index: [{ attribute: 'wiki', type: 'hash' }] };

/** `/{domain}/sys/transactions/{tid}`: lightweight HTTP transactions that survive a crash. */
export function transactionsModule(options: TransactionOptions): Module {
  // Per wiki set up here: a wiki listed by name beats from the start; a farm's wiki from its first
  // transaction in this process (before then no transaction of this process can be waiting in it).
  const perDomain = new Map<string, { heartbeat: Heartbeat; executor: TransactionExecutor; beating?: Promise<void> }>();
  let context: RequestContext | undefined;
  const partsOf = (domain: string) => {
    let parts = perDomain.get(domain);
    if (!parts) {
      const heartbeat = new Heartbeat(domain, options.leaseMs, options.log);
      const executor = new TransactionExecutor(domain, heartbeat, { lifetimeMs: options.lifetimeMs, kill: options.kill }, options.metrics, options.log);
      perDomain.set(domain, (parts = { heartbeat, executor }));
    }
    return parts;
  };
  const beating = (domain: string) => {
    const parts = partsOf(domain);
    parts.beating ??= parts.heartbeat.start(context!);
    return parts.beating;
  };
  const executor = (domain: string) => partsOf(domain).executor;
  // A farm's wikis that had transactions, listed in their group (one row each, for as long as a
  // transaction lives): every process's sweep looks in them, whichever process ran them.
  const homes = new Set<string>();
  const listedAt = new Map<string, number>();
  const groupList = (home: string) => new TableClient(home, 'transaction_wikis');
  const listInGroup = async (ctx: RequestContext, domain: string) => {
    const home = options.homeOf(domain);
    if (home === undefined || home === domain || Date.now() - (listedAt.get(domain) ?? -Infinity) < options.lifetimeMs / 2) return;
    await groupList(home).put(ctx, { attributes: { wiki: domain, _ttl: Math.ceil(options.lifetimeMs / 1000) } });
    listedAt.set(domain, Date.now());
  };
  const groupWikis = async (ctx: RequestContext): Promise<string[]> => {
    const found: string[] = [];
    for (const home of homes) {
      let next: string | undefined;
      do {
        const page = await groupList(home).query(ctx, { limit: 1000, ...(next ? { next } : {}) });
        found.push(...page.items.map((r) => r.wiki as string));
        next = page.next;
      } while (next);
    }
    return found;
  };
  let sweeper: NodeJS.Timeout | undefined;
  let sweeping: Promise<unknown> | undefined;
  // One sweep at a time: a slow one is not joined by the next tick's. It looks in the wikis whose
  // heartbeat beats here (those listed, the farm's that had a transaction here) and in the farm's
  // wikis their groups list (a transaction taken over is this process's: its heartbeat beats).
  const sweep = (ctx: RequestContext) =>
    (sweeping ??= (async () => {
      const farmed = await groupWikis(ctx).catch((err) => (options.log.warn({ err }, "reading a farm's wikis with transactions failed"), []));
      const domains = new Set([...[...perDomain].filter(([, parts]) => parts.beating !== undefined).map(([domain]) => domain), ...farmed]);
      await Promise.all([...domains].map(async (domain) => {
        await beating(domain);
        await executor(domain).recover(ctx);
      }).map((p) => p.catch((err) => options.log.warn({ err }, 'transaction sweep failed'))));
    })().finally(() => (sweeping = undefined)));

  return {
    name: 'transactions',
    api: 'sys',
    tables: ['transactions', 'transactions_pending', 'heartbeats'],
    components: transactionSpecs.components,
    async setupWiki(ctx, domain) {
      if (options.homeOf(domain) === domain) {
        homes.add(domain);
        await groupList(domain).create(ctx, TRANSACTION_WIKIS_SCHEMA);
      }
      const { heartbeat, executor: e } = partsOf(domain);
      await Promise.all([e.create(ctx), heartbeat.create(ctx)]);
      if (!options.isFarmed(domain)) await beating(domain);
    },
    async setup(ctx) {
      context = ctx;
      if (options.sweepMs > 0) {
        sweeper = setInterval(() => void sweep(ctx), options.sweepMs);
        sweeper.unref();
      }
    },
    async close() {
      if (sweeper) clearInterval(sweeper);
      await sweeping;
      for (const { heartbeat } of perDomain.values()) heartbeat.stop();
    },
    routes: [
      {
        method: 'PUT',
        path: '/transactions/{tid}',
        body: 'json',
        spec: transactionSpecs.put,
        handler: withBody(transactionBody, async (req, ctx) => {
          // This process's heartbeat beats, and a farm's wiki is in its group's list, before a transaction of it is stored.
          await beating(req.domain);
          await listInGroup(ctx, req.domain);
          return executor(req.domain).put(ctx, req.params.tid!.toLowerCase(), req.body, req.headers['if-none-match'] === '*');
        }),
      },
      {
        method: 'GET',
        path: '/transactions/{tid}',
        spec: transactionSpecs.get,
        handler: (req, ctx) => executor(req.domain).get(ctx, req.params.tid!.toLowerCase()),
      },
    ],
  };
}
