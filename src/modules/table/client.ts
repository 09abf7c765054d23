import type { RequestContext } from '../../router/types.js';
import type { Query, QueryResult, Write } from '../../storage/types.js';

/** A module's handle on one table of the table storage API, through internal requests. */
export class TableClient {
  private readonly uri: string;

  constructor(domain: string, readonly table: string) {
    this.uri = `/${domain}/sys/table/${encodeURIComponent(table)}`;
  }

  async create(ctx: RequestContext, schema: Record<string, unknown>): Promise<void> {
    await ctx.request({ method: 'PUT', uri: this.uri, body: { ...schema, table: this.table } });
  }

  async query(ctx: RequestContext, query: Omit<Query, 'table'>): Promise<QueryResult> {
    return (await ctx.request({ method: 'GET', uri: `${this.uri}/`, body: query })).body as QueryResult;
  }

  async put(ctx: RequestContext, write: Omit<Write, 'table'>): Promise<void> {
    await ctx.request({ method: 'PUT', uri: `${this.uri}/`, body: write });
  }
}
