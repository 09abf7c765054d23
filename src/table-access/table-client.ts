import { HttpError } from '../util/errors.js';
import type { RequestContext } from '../router/types.js';
import type { Query, QueryResult, Write } from '../storage/types.js';

/** A conditional write's condition did not hold (nothing was written). */
const failedCondition = (e: unknown) => e instanceof HttpError && e.status === 412;

/** A module's handle on one table of the table storage API, through internal requests. */
export class TableClient {
  readonly uri: string;
  /** The table's rows: where writes go. */
  private readonly rowsUri: string;
  private readonly queryUri: string;

  /** `whenMissing` turns the table API's "no such table" into the caller's own 404 (e.g. a bucket). */
  constructor(domain: string, readonly table: string, private readonly whenMissing?: () => HttpError) {
    this.uri = `/${domain}/sys/table/${encodeURIComponent(table)}`;
    this.rowsUri = `${this.uri}/`;
    this.queryUri = `${this.uri}/_query`;
  }

  /** (Without async frames of its own: every read of a module's table passes here.) */
  private call<T>(operation: Promise<T>): Promise<T> {
    if (!this.whenMissing) return operation;
    return operation.catch((e: unknown) => {
      throw e instanceof HttpError && e.problemType === 'urn:problem:unknown-table' ? this.whenMissing!() : e;
    });
  }

  /** Creates or migrates the table: 201 created, 200 already there. */
  async create(ctx: RequestContext, schema: Record<string, unknown>): Promise<number> {
    return (await ctx.request({ method: 'PUT', uri: this.uri, body: { ...schema, table: this.table } })).status;
  }

  /** The table's schema as stored (every default filled in). */
  schema(ctx: RequestContext): Promise<Record<string, unknown>> {
    return this.call(ctx.request({ method: 'GET', uri: this.uri }).then((res) => res.body as Record<string, unknown>));
  }

  /** A query's page of rows (none is an empty page: `_query`, not RESTBase's GET, which answers it 404). */
  query(ctx: RequestContext, query: Omit<Query, 'table'>): Promise<QueryResult> {
    return this.call(ctx.request({ method: 'POST', uri: this.queryUri, body: query }).then((res) => res.body as QueryResult));
  }

  put(ctx: RequestContext, write: Omit<Write, 'table'>): Promise<void> {
    return this.call(ctx.request({ method: 'PUT', uri: this.rowsUri, body: write }).then(() => undefined));
  }

  /** A conditional write: true if its condition held and it was written, false if not (a 412). */
  putIf(ctx: RequestContext, write: Omit<Write, 'table'> & Required<Pick<Write, 'if'>>): Promise<boolean> {
    return this.put(ctx, write).then(
      () => true,
      (e: unknown) => {
        if (failedCondition(e)) return false;
        throw e;
      },
    );
  }

  delete(ctx: RequestContext, attributes: Record<string, unknown>): Promise<void> {
    return this.call(ctx.request({ method: 'DELETE', uri: this.rowsUri, body: { attributes } }).then(() => undefined));
  }
}

/** The 404 of a bucket whose table does not exist. */
export const missingBucket = (bucket: string) => () => new HttpError(404, 'unknown-bucket', `Bucket '${bucket}' does not exist.`);
