import { HttpError } from '../errors.js';
import type { RequestContext } from '../router/types.js';
import type { Query, QueryResult, Write } from '../storage/types.js';

/** A module's handle on one table of the table storage API, through internal requests. */
export class TableClient {
  readonly uri: string;

  /** `whenMissing` turns the table API's "no such table" into the caller's own 404 (e.g. a bucket). */
  constructor(domain: string, readonly table: string, private readonly whenMissing?: () => HttpError) {
    this.uri = `/${domain}/sys/table/${encodeURIComponent(table)}`;
  }

  private async call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (this.whenMissing && e instanceof HttpError && e.problemType === 'urn:problem:unknown-table') throw this.whenMissing();
      throw e;
    }
  }

  /** Creates or migrates the table: 201 created, 200 already there. */
  async create(ctx: RequestContext, schema: Record<string, unknown>): Promise<number> {
    return (await ctx.request({ method: 'PUT', uri: this.uri, body: { ...schema, table: this.table } })).status;
  }

  query(ctx: RequestContext, query: Omit<Query, 'table'>): Promise<QueryResult> {
    return this.call(async () => (await ctx.request({ method: 'GET', uri: `${this.uri}/`, body: query })).body as QueryResult);
  }

  put(ctx: RequestContext, write: Omit<Write, 'table'>): Promise<void> {
    return this.call(async () => void (await ctx.request({ method: 'PUT', uri: `${this.uri}/`, body: write })));
  }

  delete(ctx: RequestContext, attributes: Record<string, unknown>): Promise<void> {
    return this.call(async () => void (await ctx.request({ method: 'DELETE', uri: `${this.uri}/`, body: { attributes } })));
  }
}

/** The 404 of a bucket whose table does not exist. */
export const missingBucket = (bucket: string) => () => new HttpError(404, 'unknown-bucket', `Bucket '${bucket}' does not exist.`);
