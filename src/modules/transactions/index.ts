import type { Logger } from 'pino';
import type { Metrics } from '../../metrics.js';
import type { Module, RequestContext } from '../../router/types.js';
import { TransactionExecutor, type KillPoint, type Transaction } from './executor.js';
import { Heartbeat } from './heartbeat.js';
import { transactionSpecs } from './spec.js';

export interface TransactionOptions {
  domains: string[];
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

/** `/{domain}/sys/transactions/{tid}`: lightweight HTTP transactions that survive a crash. */
export function transactionsModule(options: TransactionOptions): Module {
  const executors = new Map<string, TransactionExecutor>();
  const heartbeats: Heartbeat[] = [];
  for (const domain of options.domains) {
    const heartbeat = new Heartbeat(domain, options.leaseMs, options.log);
    heartbeats.push(heartbeat);
    executors.set(domain, new TransactionExecutor(domain, heartbeat, { lifetimeMs: options.lifetimeMs, kill: options.kill }, options.metrics, options.log));
  }
  let sweeper: NodeJS.Timeout | undefined;
  let sweeping: Promise<unknown> = Promise.resolve();
  const sweep = (ctx: RequestContext) =>
    (sweeping = Promise.all(
      [...executors.values()].map((e) => e.recover(ctx).catch((err) => options.log.warn({ err }, 'transaction sweep failed'))),
    ));

  return {
    name: 'transactions',
    api: 'sys',
    tables: ['transactions', 'heartbeats'],
    components: transactionSpecs.components,
    async setup(ctx) {
      for (const [domain, executor] of executors) {
        await executor.create(ctx);
        const heartbeat = heartbeats[options.domains.indexOf(domain)]!;
        await heartbeat.create(ctx);
        await heartbeat.start(ctx);
      }
      if (options.sweepMs > 0) {
        sweeper = setInterval(() => void sweep(ctx), options.sweepMs);
        sweeper.unref();
      }
    },
    async close() {
      if (sweeper) clearInterval(sweeper);
      await sweeping;
      for (const heartbeat of heartbeats) heartbeat.stop();
    },
    routes: [
      {
        method: 'PUT',
        path: '/transactions/{tid}',
        body: 'json',
        spec: transactionSpecs.put,
        handler: (req, ctx) =>
          executors.get(req.domain)!.put(ctx, req.params.tid!.toLowerCase(), req.body as Transaction, req.headers['if-none-match'] === '*'),
      },
      {
        method: 'GET',
        path: '/transactions/{tid}',
        spec: transactionSpecs.get,
        handler: (req, ctx) => executors.get(req.domain)!.get(ctx, req.params.tid!.toLowerCase()),
      },
    ],
  };
}
