import type { Logger } from 'pino';
import { HttpError, badRequest } from '../../util/errors.js';
import { TableClient } from '../../table-access/table-client.js';
import type { Metrics } from '../../util/metrics.js';
import type { RequestContext, Response } from '../../router/types.js';
import type { Row } from '../../storage/types.js';
import { checkNotFuture, tidTime } from '../../util/tid.js';
import type { Heartbeat } from './heartbeat.js';
import { PendingIndex, type PendingEntry } from './pending-index.js';

export interface TxRequest {
  method: string;
  uri: string;
  headers?: Record<string, string>;
  body?: unknown;
}

/** A dependent of a transaction; its `name` comes back with its result. */
export interface TxStep extends TxRequest {
  name?: string;
}

export interface Transaction extends TxRequest {
  then?: TxStep[];
}

interface Outcome {
  status: number;
  headers: Record<string, string>;
  body?: unknown;
}

export interface TxResult extends Outcome {
  then: { name?: string; status: number; headers: Record<string, string>; body?: unknown }[];
}

/** The most of a dependent's JSON answer kept in the result (its data, such as the id of what it made). */
const MAX_KEPT_BODY = 4096;

/** A dependent's answer as its result keeps it: a small JSON value; bytes, text and large values are not. */
function keptBody(body: unknown): unknown {
  if (body === undefined || body === null || typeof body !== 'object' || Buffer.isBuffer(body) || body instanceof Uint8Array) return undefined;
  return JSON.stringify(body).length <= MAX_KEPT_BODY ? body : undefined;
}

/** Where a test may make the process die (SIGKILL) while it runs a transaction. */
export type KillPoint = 'after-store' | 'after-primary-unrecorded' | 'after-primary' | 'after-dependent' | 'random';

export interface ExecutorOptions {
  lifetimeMs: number;
  kill?: KillPoint;
}

const TRANSACTIONS_SCHEMA = {
  version: 2,
  // `bucket`: where the transaction's entry in the pending index is, while it is unfinished.
  // `primary`: the primary's outcome, stored before the dependents run, so that a process taking
  // the transaction over answers what the primary really answered without running it again.
  attributes: {
    tid: 'timeuuid', owner: 'string', state: 'string', request: 'json', result: 'json', created: 'timestamp', bucket: 'int', primary: 'json',
  },
  index: [{ attribute: 'tid', type: 'hash' }],
  // Every row ends by its TTL (the transaction lifetime): compacted by time window, and its
  // tombstones kept an hour rather than ten days (a resurrected row is inert: it expires).
  options: { gc_grace_seconds: 3600, updates: { pattern: 'timeseries' } },
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
 * Runs HTTP transactions (docs/architecture.md, "HTTP transactions"): the transaction is stored before anything runs; its
 * primary request runs through the router; only if it succeeded do the dependents run, each once
 * in effect (they are idempotent); then the stored transaction is replaced by its result. A process
 * that dies leaves the stored transaction behind, owned by a heartbeat that stops: another process
 * takes it over with a conditional write and finishes it (`recover`).
 */
export class TransactionExecutor {
  readonly table: TableClient;
  private readonly pending: PendingIndex;
  /** Transactions this process is storing or running now: not for the sweep to take. */
  private readonly running = new Set<string>();

  constructor(
    private readonly domain: string,
    private readonly heartbeat: Heartbeat,
    private readonly options: ExecutorOptions,
    private readonly metrics: Metrics,
    private readonly log: Logger,
  ) {
    this.table = new TableClient(domain, 'transactions');
    this.pending = new PendingIndex(domain, options.lifetimeMs);
  }

  async create(ctx: RequestContext): Promise<void> {
    await Promise.all([this.table.create(ctx, TRANSACTIONS_SCHEMA), this.pending.create(ctx)]);
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

  /**
   * Stores, then runs a new transaction; a tid already stored answers what that one did. Its entry
   * in the pending index is written first: a crash between the two writes leaves an entry without
   * a transaction (removed by a sweep), never a transaction no sweep finds.
   */
  async put(ctx: RequestContext, tid: string, txn: Transaction, onlyIfNew: boolean): Promise<Response> {
    this.check(tid, txn);
    if (this.running.has(tid)) return this.existing(ctx, tid, onlyIfNew);
    this.running.add(tid);
    let bucket: number;
    try {
      const ttl = this.ttlSeconds(tid);
      bucket = await this.pending.add(ctx, tid, this.heartbeat.owner, ttl);
      await this.table.put(ctx, {
        attributes: { tid, owner: this.heartbeat.owner, state: 'pending', request: txn, created: Date.now(), bucket, _ttl: ttl },
        if: 'not exists',
      });
    } catch (e) {
      this.running.delete(tid);
      if (!(e instanceof HttpError && e.status === 412)) throw e;
      // Stored already. The entry written above may have overwritten that transaction's own (same
      // minute): it names its real owner again, or sweeps would wait on this live process for it.
      const [row] = (await this.table.query(ctx, { attributes: { tid }, proj: ['owner', 'state', 'bucket'] })).items;
      if (row?.state === 'pending' && row.bucket === bucket!) await this.pending.add(ctx, tid, row.owner as string, this.ttlSeconds(tid), bucket!);
      return this.existing(ctx, tid, onlyIfNew);
    }
    this.metrics.transactions.inc({ event: 'started' });
    return this.run(ctx, tid, { request: txn, bucket }, false);
  }

  /** A second PUT of a tid: its result, or 409 while it is still running. */
  private async existing(ctx: RequestContext, tid: string, onlyIfNew: boolean): Promise<Response> {
    if (onlyIfNew) throw new HttpError(412, 'transaction-exists', `Transaction ${tid} was already submitted.`);
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
    const points = ['after-store', 'after-primary-unrecorded', 'after-primary', ...Array.from({ length: dependents }, (_, i) => `after-dependent-${i}`)];
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

  /**
   * After a crash, the primary may have run without its outcome stored: a precondition that fails
   * now because it ran is its success. The entity it names is read for what it answered (status and
   * headers such as the ETag of the version it made).
   */
  private async alreadyApplied(ctx: RequestContext, uri: string): Promise<Outcome | undefined> {
    try {
      const res = await ctx.request({ method: 'GET', uri });
      return res.status < 300 ? { status: res.status, headers: res.headers ?? {}, body: undefined } : undefined;
    } catch {
      return undefined;
    }
  }

  private async run(ctx: RequestContext, tid: string, stored: StoredTransaction, recovering: boolean): Promise<Response> {
    const txn = stored.request;
    this.running.add(tid);
    try {
      const die = this.killPoint(txn.then?.length ?? 0);
      this.maybeDie('after-store', die);
      let primary = stored.primary;
      if (!primary) {
        primary = await this.send(ctx, txn);
        const applied = primary.status === 412 && recovering ? await this.alreadyApplied(ctx, txn.uri) : undefined;
        if (applied) primary = applied;
        else if (primary.status >= 400) {
          await this.table.delete(ctx, { tid });
          await this.forget(ctx, stored, tid);
          this.metrics.transactions.inc({ event: 'failed' });
          return { status: primary.status, headers: { ...primary.headers, 'content-type': 'application/problem+json' }, body: primary.body };
        }
        this.maybeDie('after-primary-unrecorded', die);
        if (txn.then?.length) await this.table.put(ctx, { attributes: { tid, primary, _ttl: this.ttlSeconds(tid) } });
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
        if (outcome.status >= 500) throw new HttpError(503, 'transaction-incomplete', `Dependent ${dependent.name ?? i} failed with ${outcome.status}; the transaction will be finished later.`, { headers: { 'retry-after': '5' } });
        const kept = keptBody(outcome.body);
        then.push({ ...(dependent.name === undefined ? {} : { name: dependent.name }), status: outcome.status, headers: outcome.headers, ...(kept === undefined ? {} : { body: kept }) });
        this.maybeDie(`after-dependent-${i}`, die);
      }
      const result: TxResult = { status: primary.status, headers: primary.headers, body: primary.body, then };
      await this.table.put(ctx, { attributes: { tid, owner: this.heartbeat.owner, state: 'done', result, _ttl: this.ttlSeconds(tid) } });
      await this.forget(ctx, stored, tid);
      this.metrics.transactions.inc({ event: 'finished' });
      return { status: 200, headers: { 'cache-control': 'no-cache' }, body: result };
    } finally {
      this.running.delete(tid);
    }
  }

  /** Its entry out of the pending index, once the transaction is finished or forgotten. */
  private async forget(ctx: RequestContext, stored: StoredTransaction, tid: string): Promise<void> {
    if (stored.bucket !== undefined) await this.pending.remove(ctx, stored.bucket, tid);
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
    // False: another process took it.
    if (!(await this.table.putIf(ctx, { attributes: { tid, owner: this.heartbeat.owner, _ttl: this.ttlSeconds(tid) }, if: { owner: { eq: owner } } }))) return false;
    const [taken] = (await this.table.query(ctx, { attributes: { tid } })).items;
    if (!taken || taken.state !== 'pending' || this.running.has(tid)) return false;
    this.log.info({ tid, from: owner }, 'recovering a transaction');
    this.metrics.transactions.inc({ event: 'recovered' });
    await this.run(ctx, tid, storedTransaction(taken), true);
    return true;
  }

  /**
   * What one entry of the pending index stands for: a transaction to take over (its owner died, or
   * this process left it unfinished), one still someone's, or nothing any more (finished, or never
   * stored: a crash between the entry and the transaction) — then the entry goes.
   */
  private async settle(ctx: RequestContext, entry: PendingEntry, alive: (owner: string) => Promise<boolean>): Promise<'recovered' | 'pending' | 'gone'> {
    const [row] = (await this.table.query(ctx, { attributes: { tid: entry.tid } })).items;
    const finished = row ? row.state !== 'pending' : Date.now() - entry.stored > ORPHAN_AFTER_MS;
    if (finished) {
      await this.pending.remove(ctx, entry.bucket, entry.tid);
      return 'gone';
    }
    if (!row) return 'pending';
    return (await this.recoverOne(ctx, row, alive)) ? 'recovered' : 'pending';
  }

  /**
   * Finishes stored transactions whose owner died (its heartbeat is gone) or that this process
   * left unfinished. Runs on a timer and reads only the pending index (see PendingIndex); a request
   * that touches such a transaction starts it too.
   */
  async recover(ctx: RequestContext): Promise<number> {
    const started = Date.now();
    const timer = performance.now();
    let recovered = 0;
    let oldest = 0;
    // One heartbeat read per owner and sweep, however many of its transactions are stored.
    const owners = new Map<string, Promise<boolean>>();
    const alive = (owner: string) => {
      let known = owners.get(owner);
      if (!known) owners.set(owner, (known = this.heartbeat.alive(ctx, owner)));
      return known;
    };
    try {
      for await (const entry of this.pending.entries(ctx)) {
        if (this.running.has(entry.tid) || (entry.owner !== this.heartbeat.owner && (await alive(entry.owner)))) {
          oldest = Math.max(oldest, started - entry.stored);
          continue;
        }
        try {
          const outcome = await this.settle(ctx, entry, alive);
          if (outcome === 'recovered') recovered++;
          if (outcome === 'pending') oldest = Math.max(oldest, started - entry.stored);
        } catch (err) {
          oldest = Math.max(oldest, started - entry.stored);
          this.log.warn({ err, tid: entry.tid }, 'recovering a transaction failed; the next sweep tries again');
        }
      }
    } catch (err) {
      this.metrics.transactionSweeps.inc({ domain: this.metrics.wikiLabel(this.domain), outcome: 'failed' });
      throw err;
    }
    this.metrics.transactionSweeps.inc({ domain: this.metrics.wikiLabel(this.domain), outcome: 'done' });
    this.metrics.transactionSweepSeconds.set({ domain: this.domain }, (performance.now() - timer) / 1000);
    this.metrics.oldestTransaction.set({ domain: this.domain }, oldest / 1000);
    return recovered;
  }
}

/** A transaction's stored row, as `run` needs it. */
interface StoredTransaction {
  request: Transaction;
  bucket?: number;
  primary?: Outcome;
}

const storedTransaction = (row: Row): StoredTransaction => ({
  request: row.request as Transaction,
  bucket: typeof row.bucket === 'number' ? row.bucket : undefined,
  primary: (row.primary ?? undefined) as Outcome | undefined,
});

/** An entry whose transaction is not stored this long after it was written is left from a crash. */
const ORPHAN_AFTER_MS = 60_000;
