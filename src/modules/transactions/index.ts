import type { Logger } from 'pino';
import type { Metrics } from '../../util/metrics.js';
import { withBody } from '../../router/typed-body.js';
import type { Module, RequestContext } from '../../router/types.js';
import { TransactionExecutor, type KillPoint } from './executor.js';
import { Heartbeat } from './heartbeat.js';
import { transactionBody, transactionSpecs } from './spec.js';

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
  const perDomain = new Map(
    options.domains.map((domain) => {
      const heartbeat = new Heartbeat(domain, options.leaseMs, options.log);
      const executor = new TransactionExecutor(domain, heartbeat, { lifetimeMs: options.lifetimeMs, kill: options.kill }, options.metrics, options.log);
      return [domain, { heartbeat, executor }] as const;
    }),
  );
  const executor = (domain: string) => perDomain.get(domain)!.executor;
  let sweeper: NodeJS.Timeout | undefined;
  let sweeping: Promise<unknown> | undefined;
  // One sweep at a time: a slow one is not joined by the next tick's.
  const sweep = (ctx: RequestContext) =>
    (sweeping ??= Promise.all(
      [...perDomain.values()].map(({ executor: e }) => e.recover(ctx).catch((err) => options.log.warn({ err }, 'transaction sweep failed'))),
    ).finally(() => (sweeping = undefined)));

  return {
    name: 'transactions',
    api: 'sys',
    tables: ['transactions', 'transactions_pending', 'heartbeats'],
    components: transactionSpecs.components,
    async setup(ctx) {
      await Promise.all(
        [...perDomain.values()].map(async ({ heartbeat, executor: e }) => {
          await Promise.all([e.create(ctx), heartbeat.create(ctx)]);
          await heartbeat.start(ctx);
        }),
      );
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
        handler: withBody(transactionBody, (req, ctx) =>
          executor(req.domain).put(ctx, req.params.tid!.toLowerCase(), req.body, req.headers['if-none-match'] === '*'),
        ),
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
