import { HttpError, preconditionFailed } from '../../util/errors.js';
import type { RequestContext } from '../../router/types.js';
import { validityOf, type AnswerValidity } from '../../storage/answer-validity.js';
import type { QueryResult, RetentionPolicy, Row } from '../../storage/types.js';
import { missingBucket, TableClient } from '../../table-access/table-client.js';
import { compareTids, maxTidAt, newTid } from '../../util/tid.js';
import type { Entity } from './entity.js';
import { BucketIndexReader, indexColumn, indexSchema, indexValues, type BucketIndexes } from './bucket-indexes.js';

export interface Revision {
  tid: string;
  value: Buffer;
  headers: Record<string, string>;
  /** How long the row read stays current, where the engine knows it (see storage/answer-validity.ts). */
  validity?: AnswerValidity;
}

/** A write condition in HTTP terms: If-Match on the latest tid (`*`: any), or If-None-Match: * (no revision yet). */
export interface WritePrecondition {
  ifMatch?: string;
  ifNoneMatch?: boolean;
}

/** Lost races are retried with a growing, jittered pause for up to about two seconds. */
const MAX_RACE_RETRIES = 24;
const raceBackoffMs = (attempt: number) => Math.min(200, 2 ** Math.min(attempt, 8)) * (0.5 + Math.random());

/**
 * Unconditional writes to one key from this process take turns, so they do not race each other
 * for the latest pointer; writers in other processes are still handled by the CAS and retries.
 */
const keyQueues = new Map<string, Promise<unknown>>();
function inTurn<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const previous = keyQueues.get(key) ?? Promise.resolve();
  const result = previous.then(fn, fn);
  const settled = result.then(
    () => undefined,
    () => undefined,
  );
  keyQueues.set(key, settled);
  void settled.then(() => {
    if (keyQueues.get(key) === settled) keyQueues.delete(key);
  });
  return result;
}

/**
 * Revisioned blobs over the table storage API (internal requests only): one partition per key,
 * revisions ordered by tid, and a static latest tid per key that makes If-Match a CAS.
 * `key` is one or more string attributes (a key_rev_value key; an object name and property).
 */
export class RevisionStore {
  private readonly client: TableClient;
  readonly indexes: BucketIndexReader;

  /** `bucket` names the bucket in errors; `table` is the table holding its revisions. */
  constructor(domain: string, bucket: string, readonly table: string, private readonly keyAttributes: string[]) {
    this.client = new TableClient(domain, table, missingBucket(bucket));
    this.indexes = new BucketIndexReader(this.client);
  }

  schema(retention: RetentionPolicy | undefined, indexes: BucketIndexes = {}): Record<string, unknown> {
    const extra = indexSchema(indexes, this.keyAttributes, true);
    return {
      version: 1,
      attributes: {
        ...Object.fromEntries(this.keyAttributes.map((a) => [a, 'string'])), tid: 'timeuuid', latest_tid: 'timeuuid', value: 'blob', headers: 'json', ...extra.attributes,
      },
      index: [...this.keyAttributes.map((a) => ({ attribute: a, type: 'hash' })), { attribute: 'latest_tid', type: 'static' }, { attribute: 'tid', type: 'range', order: 'desc' }],
      secondaryIndexes: extra.secondaryIndexes,
      revisionRetentionPolicy: retention ?? { type: 'all' },
      options: extra.options,
    };
  }

  create(ctx: RequestContext, retention: RetentionPolicy | undefined, indexes: BucketIndexes = {}): Promise<number> {
    return this.client.create(ctx, this.schema(retention, indexes));
  }

  /**
   * The keys and revisions whose value carried `value` in the header index `name` indexes, newest
   * revision first per key; with `revisions: latest`, only keys whose latest revision has it.
   */
  async byIndex(ctx: RequestContext, name: string, value: string, paging: { limit?: number; next?: string }): Promise<{ items: Row[]; next?: string }> {
    const index = await this.indexes.index(ctx, name);
    const proj = [...this.keyAttributes, 'tid'];
    const latestOnly = index.revisions === 'latest';
    // Every revision is indexed; the latest-only listing reads each key's latest tid with its
    // rows (a static column, in the same query) and keeps the revisions that are it.
    const { items, next } = await this.query(ctx, { index: name, attributes: { [indexColumn(name)]: value }, proj: latestOnly ? [...proj, 'latest_tid'] : proj, ...paging });
    if (!latestOnly) return { items, next };
    return { items: items.filter((r) => r.tid === r.latest_tid).map((r) => Object.fromEntries(proj.map((a) => [a, r[a]]))), next };
  }

  private query(ctx: RequestContext, body: Record<string, unknown>): Promise<QueryResult> {
    return this.client.query(ctx, body);
  }

  private async latestTid(ctx: RequestContext, key: Record<string, string>): Promise<string | undefined> {
    const { items } = await this.query(ctx, { attributes: key, proj: ['latest_tid'], limit: 1 });
    return (items[0]?.latest_tid as string | null | undefined) ?? undefined;
  }

  private write(ctx: RequestContext, attributes: Record<string, unknown>, condition?: 'not exists' | Record<string, { eq: unknown }>): Promise<void> {
    return this.client.put(ctx, { attributes, if: condition });
  }

  /**
   * Saves a new revision. The latest tid only moves forward: every write is a CAS on it, retried
   * after a lost race unless the caller made the write conditional (If-Match / If-None-Match).
   */
  put(ctx: RequestContext, key: Record<string, string>, entity: Entity, pre: WritePrecondition, chosenTid?: string): Promise<string> {
    return inTurn(JSON.stringify([this.client.uri, key]), () => this.putNow(ctx, key, entity, pre, chosenTid));
  }

  private async putNow(ctx: RequestContext, key: Record<string, string>, entity: Entity, pre: WritePrecondition, chosenTid?: string): Promise<string> {
    const tid = chosenTid ?? newTid();
    const row = { ...key, tid, value: entity.value, headers: entity.headers, ...indexValues(await this.indexes.of(ctx), entity.headers) };
    // A caller-chosen tid never rewrites a revision: content by tid is immutable.
    if (chosenTid && (await this.byTid(ctx, key, chosenTid))) throw preconditionFailed(`Revision ${tid} already exists.`, 'revision-exists');
    for (let attempt = 0; attempt < MAX_RACE_RETRIES; attempt++) {
      const current = await this.latestTid(ctx, key);
      if (pre.ifMatch === '*' ? current === undefined : pre.ifMatch !== undefined && current !== pre.ifMatch) {
        throw preconditionFailed(`The latest revision is ${current ?? 'none'}, not ${pre.ifMatch}.`, 'revision-conflict');
      }
      if (pre.ifNoneMatch && current !== undefined) throw preconditionFailed('The key already has revisions.', 'revision-conflict');
      if (current !== undefined && compareTids(tid, current) <= 0) {
        // An older caller-chosen tid joins the history without becoming the latest.
        await this.write(ctx, row, 'not exists');
        return tid;
      }
      try {
        await this.write(ctx, { ...row, latest_tid: tid }, { latest_tid: { eq: current ?? null } });
        return tid;
      } catch (e) {
        if (!(e instanceof HttpError && e.status === 412)) throw e;
        if ((pre.ifMatch !== undefined && pre.ifMatch !== '*') || pre.ifNoneMatch) throw preconditionFailed('Another revision was saved first.', 'revision-conflict');
        await new Promise((r) => setTimeout(r, raceBackoffMs(attempt)));
      }
    }
    throw new HttpError(503, 'write-contention', 'Too many concurrent writes to this key; try again.', { headers: { 'retry-after': '1' } });
  }

  async latest(ctx: RequestContext, key: Record<string, string>): Promise<Revision | undefined> {
    return toRevision((await this.query(ctx, { attributes: key, proj: REVISION, limit: 1 })).items[0]);
  }

  async byTid(ctx: RequestContext, key: Record<string, string>, tid: string): Promise<Revision | undefined> {
    return toRevision((await this.query(ctx, { attributes: { ...key, tid }, proj: REVISION })).items[0]);
  }

  /** The revision that was current at `ms`: the newest with a tid at or before it. */
  async atTime(ctx: RequestContext, key: Record<string, string>, ms: number): Promise<Revision | undefined> {
    return toRevision((await this.query(ctx, { attributes: { ...key, tid: { le: maxTidAt(ms) } }, proj: REVISION, limit: 1 })).items[0]);
  }

  async listRevisions(ctx: RequestContext, key: Record<string, string>, paging: { limit?: number; next?: string }): Promise<{ items: string[]; next?: string }> {
    const result = await this.query(ctx, { attributes: key, proj: ['tid'], ...paging });
    return { items: result.items.map((r) => r.tid as string), next: result.next };
  }

  async listKeys(ctx: RequestContext, paging: { limit?: number; next?: string }, fixed: Record<string, string> = {}): Promise<{ items: Row[]; next?: string }> {
    return this.query(ctx, { attributes: fixed, distinct: true, proj: this.keyAttributes, ...paging });
  }
}

/** What a revision read needs: not the partition's static latest tid, which would join a second table. */
const REVISION = ['tid', 'value', 'headers'];

export function toRevision(row: Row | undefined): Revision | undefined {
  if (!row) return undefined;
  return { tid: row.tid as string, value: row.value as Buffer, headers: row.headers as Record<string, string>, validity: validityOf(row) };
}
