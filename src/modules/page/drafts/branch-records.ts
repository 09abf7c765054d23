import type { Logger } from 'pino';
import type { Module, RequestContext } from '../../../router/types.js';
import type { BranchExpirySweep } from './branch-expiry-sweep.js';
import type { Branches } from './branches.js';
import { BRANCH_MERGED_STEP, branchSpecs } from './branch-spec.js';
import { FarmWikis } from '../tables/farm-wikis.js';

export interface BranchRecordOptions {
  /** A farm's wiki's storage group's home (the home's own too): its wikis are swept as well. */
  homeOf: (domain: string) => string | undefined;
  expiry: BranchExpirySweep;
  /** How often expired branches are swept (ms); 0: never. */
  sweepMs: number;
  log: Logger;
}

/**
 * `/{domain}/sys/page_branches/...`: the step of a promote's transaction that marks the branch
 * merged (idempotent, as a transaction's steps must be), and the branch tables with their
 * expiry sweep.
 */
export function branchRecordsModule(branches: Branches, { expiry, sweepMs, log, homeOf }: BranchRecordOptions): Module {
  /** The wikis set up in this process: those listed, and those of a farm served here (each is swept by whichever process served it). */
  const domains = new Set<string>();
  /** The farms' groups: every wiki they found is swept, whichever process served it. */
  const homes = new Set<string>();
  const farmWikis = async (ctx: RequestContext) => {
    const found: string[] = [];
    for (const home of homes) for await (const wiki of new FarmWikis(home).all(ctx)) found.push(wiki);
    return found;
  };
  let timer: NodeJS.Timeout | undefined;
  let sweeping: Promise<unknown> | undefined;
  const sweep = (ctx: RequestContext) =>
    (sweeping ??= farmWikis(ctx).catch(() => []).then((farmed) => Promise.all([...new Set([...domains, ...farmed])].map((domain) => expiry.run(ctx, domain).catch((err) => log.warn({ err, domain }, 'sweeping expired branches failed')))))
      .finally(() => (sweeping = undefined)));
  return {
    name: 'page_branches',
    api: 'sys',
    tables: ['page_branches', 'page_branch_lists', 'page_branch_expiry'],
    async setupWiki(ctx, domain) {
      await branches.createTables(ctx, domain);
      if (homeOf(domain) === domain) homes.add(domain);
      else domains.add(domain);
    },
    async setup(ctx) {
      if (sweepMs > 0) {
        timer = setInterval(() => void sweep(ctx), sweepMs);
        timer.unref();
      }
    },
    async close() {
      if (timer) clearInterval(timer);
      await sweeping;
    },
    routes: [
      {
        ...BRANCH_MERGED_STEP,
        spec: branchSpecs.merged,
        handler: async (req, ctx) => {
          const head = await branches.markMerged(ctx, req.domain, req.params.branch!.toLowerCase(), Number(req.params.rev), req.params.tid!.toLowerCase());
          // A branch gone (expired meanwhile) has nothing to mark: the save stands.
          return { status: 200, body: { branch: req.params.branch, state: head?.state ?? null, merged_rev: head?.merged_rev ?? null } };
        },
      },
    ],
  };
}
