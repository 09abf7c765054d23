import type { Logger } from 'pino';
import { HttpError, badRequest } from '../../errors.js';
import { TableClient } from '../../internal/table-client.js';
import type { Metrics } from '../../metrics.js';
import type { RequestContext, Response } from '../../router/types.js';
import type { Row } from '../../storage/types.js';
import { checkNotFuture, tidTime } from '../../tid.js';
import type { Heartbeat } from './heartbeat.js';

export interface TxRequest {
  method: string;
  uri: string;
  headers?: Record<string, string>;
  body?: unknown;
}

export interface Transaction extends TxRequest {
  then?: TxRequest[];
}

interface Outcome {
  status: number;
  headers: Record<string, string>;
  body?: unknown;
}

export interface TxResult extends Outcome {
  then: { status: number; headers: Record<string, string> }[];
}

/** Where a test may make the process die (SIGKILL) while it runs a transaction. */
export type KillPoint = 'after-store' | 'after-primary' | 'after-dependent' | 'random';

export interface ExecutorOptions {
  lifetimeMs: number;
  kill?: KillPoint;
}

export const TRANSACTIONS_SCHEMA = {
  version: 1,
  attributes: { tid: 'timeuuid', owner: 'string', state: 'string', request: 'json', result: 'json', created: 'timestamp' },
  index: [{ attribute: 'tid', type: 'hash' }],
};

const DEPENDENT_ATTEMPTS = 3;

/** A URI's path as routing sees it (percent-decoded, `//` as `/`), or undefined if it does not decode. */
function decodedPath(uri: string): string | undefined {
  try {
    return decodeURIComponent(uri.split('?', 1)[0]!).replace(/\/{2,}/g, '/');
  } catch {
    return undefined;
  }
}

/**
 * Runs HTTP transactions (DESIGN.md §6): the transaction is stored before anything runs; its
 * primary request runs through the router; only if it succeeded do the dependents run, each once
 * in effect (they are idempotent); then the stored transaction is replaced by its result. A process
 * that dies leaves the stored transaction behind, owned by a heartbeat that stops: another process
 * takes it over with a conditional write and finishes it (`recover`).
 */
export class TransactionExecutor {
  readonly table: TableClient;
  /** Transactions this process is running now: not for the sweep to take. */
  private readonly running = new Set<string>();

  constructor(
    private readonly domain: string,
    private readonly heartbeat: Heartbeat,
    private readonly options: ExecutorOptions,
    private readonly metrics: Metrics,
    private readonly log: Logger,
  ) {
    this.table = new TableClient(domain, 'transactions');
  }

  async create(ctx: RequestContext): Promise<void> {
    await this.table.create(ctx, TRANSACTIONS_SCHEMA);
  }

  private ttlSeconds(tid: string): number {
    return Math.max(1, Math.ceil((tidTime(tid) + this.options.lifetimeMs - Date.now()) / 1000));
  }

  /** Refuses what could not be run safely: tids outside the lifetime, URIs of other domains. */
  check(tid: string, txn: Transaction): void {
    checkNotFuture(tid);
    if (tidTime(tid) < Date.now() - this.options.lifetimeMs) {
      throw badRequest(`Transaction ${tid} is older than the transaction lifetime (${this.options.lifetimeMs / 1000} s).`, 'transaction-expired');
    }
    for (const r of [txn, ...(txn.then ?? [])]) {
      // Checked on the path as the router will read it: decoded, repeated slashes as one.
      const path = decodedPath(r.uri);
      if (path === undefined || !path.startsWith(`/${this.domain}/`)) throw badRequest(`Transaction requests stay in ${this.domain}: ${r.uri.slice(0, 200)}`, 'invalid-transaction');
      if (/^\/[^/]+\/sys\/transactions(\/|$)/i.test(path)) throw badRequest('A transaction cannot contain transactions.', 'invalid-transaction');
    }
  }

  /** Stores, then runs a new transaction; a tid already stored answers what that one did. */
  async put(ctx: RequestContext, tid: string, txn: Transaction, onlyIfNew: boolean): Promise<Response> {
    this.check(tid, txn);
    try {
      await this.table.put(ctx, {
        attributes: { tid, owner: this.heartbeat.owner, state: 'pending', request: txn, created: Date.now(), _ttl: this.ttlSeconds(tid) },
        if: 'not exists',
      });
    } catch (e) {
      if (!(e instanceof HttpError && e.status === 412)) throw e;
      if (onlyIfNew) throw new HttpError(412, 'transaction-exists', `Transaction ${tid} was already submitted.`);
      return this.existing(ctx, tid);
    }
    this.metrics.transactions.inc({ event: 'started' });
    return this.run(ctx, tid, txn, false);
  }

  /** A second PUT of a tid: its result, or 409 while it is still running. */
  private async existing(ctx: RequestContext, tid: string): Promise<Response> {
    const [row] = (await this.table.query(ctx, { attributes: { tid } })).items;
    if (row?.state === 'done') return { status: 200, body: row.result };
    if (row) this.touch(ctx, row);
    throw new HttpError(409, 'transaction-running', `Transaction ${tid} is running; GET it for its result.`, { headers: { 'retry-after': '1' } });
  }

  async get(ctx: RequestContext, tid: string): Promise<Response> {
    const [row] = (await this.table.query(ctx, { attributes: { tid } })).items;
    if (row) {
      if (row.state !== 'done') this.touch(ctx, row);
      return row.state === 'done'
        ? { status: 200, headers: { 'cache-control': 'no-cache' }, body: { state: 'done', result: row.result } }
        : { status: 200, headers: { 'cache-control': 'no-cache' }, body: { state: 'pending', request: row.request } };
    }
    if (tidTime(tid) < Date.now() - this.options.lifetimeMs) throw new HttpError(410, 'transaction-expired', `Transaction ${tid} is older than the transaction lifetime.`);
    throw new HttpError(404, 'transaction-not-found', `No transaction ${tid} was performed.`);
  }

  private maybeDie(point: string, chosen: string | undefined): void {
    if (chosen === point) {
      this.log.warn({ point }, 'fault injection: dying in a transaction');
      process.kill(process.pid, 'SIGKILL');
    }
  }

  private killPoint(dependents: number): string | undefined {
    const kill = this.options.kill;
    if (kill === 'after-dependent') return 'after-dependent-0';
    if (kill !== 'random') return kill;
    const points = ['after-store', 'after-primary', ...Array.from({ length: dependents }, (_, i) => `after-dependent-${i}`)];
    return points[Math.floor(Math.random() * points.length)];
  }

  /** Sends one request of a transaction through the router; a failure is an outcome, not an exception. */
  private async send(ctx: RequestContext, r: TxRequest): Promise<Outcome> {
    const headers = Object.fromEntries(Object.entries(r.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
    let body = r.body;
    if (headers['content-transfer-encoding'] === 'base64' && typeof body === 'string') {
      body = Buffer.from(body, 'base64');
      delete headers['content-transfer-encoding'];
    }
    try {
      const res = await ctx.request({ method: r.method.toUpperCase(), uri: r.uri, headers, body });
      return { status: res.status, headers: res.headers ?? {}, body: res.body };
    } catch (e) {
      if (!(e instanceof HttpError)) throw e;
      return { status: e.status, headers: e.headers, body: e.toProblem(r.uri) };
    }
  }

  /** Whether the entity a primary names exists (after a crash, its precondition may fail because it ran). */
  private async exists(ctx: RequestContext, uri: string): Promise<boolean> {
    try {
      return (await ctx.request({ method: 'GET', uri })).status < 300;
    } catch {
      return false;
    }
  }

  private async run(ctx: RequestContext, tid: string, txn: Transaction, recovering: boolean): Promise<Response> {
    this.running.add(tid);
    try {
      const die = this.killPoint(txn.then?.length ?? 0);
      this.maybeDie('after-store', die);
      let primary = await this.send(ctx, txn);
      if (primary.status >= 400) {
        // Re-run after a crash: a precondition that fails because the primary already ran is success.
        if (recovering && primary.status === 412 && (await this.exists(ctx, txn.uri))) primary = { status: 200, headers: {}, body: undefined };
        else {
          await this.table.delete(ctx, { tid });
          this.metrics.transactions.inc({ event: 'failed' });
          return { status: primary.status, headers: { ...primary.headers, 'content-type': 'application/problem+json' }, body: primary.body };
        }
      }
      this.maybeDie('after-primary', die);
      const then: TxResult['then'] = [];
      for (const [i, dependent] of (txn.then ?? []).entries()) {
        let outcome = await this.send(ctx, dependent);
        for (let attempt = 1; outcome.status >= 500 && attempt < DEPENDENT_ATTEMPTS; attempt++) {
          await new Promise((r) => setTimeout(r, 100 * attempt));
          outcome = await this.send(ctx, dependent);
        }
        // A dependent that still fails leaves the transaction for the sweep to finish later.
        if (outcome.status >= 500) throw new HttpError(503, 'transaction-incomplete', `Dependent ${i} failed with ${outcome.status}; the transaction will be finished later.`, { headers: { 'retry-after': '5' } });
        then.push({ status: outcome.status, headers: outcome.headers });
        this.maybeDie(`after-dependent-${i}`, die);
      }
      const result: TxResult = { status: primary.status, headers: primary.headers, body: primary.body, then };
      await this.table.put(ctx, { attributes: { tid, owner: this.heartbeat.owner, state: 'done', result, _ttl: this.ttlSeconds(tid) } });
      this.metrics.transactions.inc({ event: 'finished' });
      return { status: 200, headers: { 'cache-control': 'no-cache' }, body: result };
    } finally {
      this.running.delete(tid);
    }
  }

  /** A request touched an unfinished transaction: finish it now if its owner is gone. */
  private touch(ctx: RequestContext, row: Row): void {
    this.recoverOne(ctx, row).catch((err) => this.log.warn({ err, tid: row.tid }, 'recovering a touched transaction failed'));
  }

  /** Takes over one unfinished transaction whose owner is dead (one taker, by a conditional write) and runs it. */
  private async recoverOne(ctx: RequestContext, row: Row, alive = (owner: string) => this.heartbeat.alive(ctx, owner)): Promise<boolean> {
    const tid = row.tid as string;
    const owner = row.owner as string;
    if (row.state !== 'pending' || this.running.has(tid)) return false;
    if (owner !== this.heartbeat.owner && (await alive(owner))) return false;
    try {
      await this.table.put(ctx, { attributes: { tid, owner: this.heartbeat.owner }, if: { owner: { eq: owner } } });
    } catch (e) {
      if (e instanceof HttpError && e.status === 412) return false; // another process took it
      throw e;
    }
    const [stored] = (await this.table.query(ctx, { attributes: { tid } })).items;
    if (!stored || stored.state !== 'pending' || this.running.has(tid)) return false;
    this.log.info({ tid, from: owner }, 'recovering a transaction');
    this.metrics.transactions.inc({ event: 'recovered' });
    await this.run(ctx, tid, stored.request as Transaction, true);
    return true;
  }

  /**
   * Finishes stored transactions whose owner died (its heartbeat is gone) or that this process
   * left unfinished. Runs on a timer; a request that touches such a transaction starts it too.
   */
  async recover(ctx: RequestContext): Promise<number> {
    let recovered = 0;
    let oldest = 0;
    let next: string | undefined;
    // One heartbeat read per owner and sweep, however many of its transactions are stored.
    const owners = new Map<string, Promise<boolean>>();
    const alive = (owner: string) => {
      let known = owners.get(owner);
      if (!known) owners.set(owner, (known = this.heartbeat.alive(ctx, owner)));
      return known;
    };
    do {
      const page = await this.table.query(ctx, { proj: ['tid', 'owner', 'state', 'created'], limit: 500, next });
      next = page.next;
      for (const row of page.items) {
        if (row.state !== 'pending') continue;
        oldest = Math.max(oldest, Date.now() - Date.parse(row.created as string));
        try {
          if (await this.recoverOne(ctx, row, alive)) recovered++;
        } catch (err) {
          this.log.warn({ err, tid: row.tid }, 'recovering a transaction failed; the next sweep tries again');
        }
      }
    } while (next);
    this.metrics.oldestTransaction.set({ domain: this.domain }, oldest / 1000);
    return recovered;
  }
}
