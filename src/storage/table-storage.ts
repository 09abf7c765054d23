import type { Delete, Query, QueryResult, TableSchema, Write } from './types.js';

/**
 * The table storage API (RESTBase's table format: DynamoDB-like operations on Cassandra's data
 * model). Every backend answers the same inputs the same way; validation is shared.
 */
export interface TableStorage {
  /** The engine's name: sqlite, postgres or cassandra. */
  readonly backend: string;
  /** Whether the engine removes expired rows itself (then `sweepExpired` has nothing to do). */
  readonly expiresNatively: boolean;
  /** Creates a table or migrates it to a higher schema version; 'unchanged' for the same schema. */
  createTable(domain: string, name: string, rawSchema: unknown): Promise<'created' | 'updated' | 'unchanged'>;
  /** The schema with every default filled in, and its domain: PUT back as it is, it changes nothing. */
  getSchema(domain: string, name: string): Promise<TableSchema & { domain: string }>;
  dropTable(domain: string, name: string): Promise<void>;
  /** The names of a domain's tables (for tools that work on a whole wiki's store: moving it into a storage group). */
  listTables(domain: string): Promise<string[]>;
  get(domain: string, query: Query): Promise<QueryResult>;
  /** Writes one row (and/or its partition's static columns); a failed condition is a 412 and writes nothing. */
  put(domain: string, write: Write): Promise<void>;
  /** Deletes the rows matching a (partial) primary key; without range keys, the static columns too. */
  delete(domain: string, del: Delete): Promise<void>;
  /** Removes rows whose TTL has passed (reads never return them; this reclaims their space). */
  sweepExpired(): Promise<number>;
  /**
   * Whether the engine answers now (a trivial read, within `timeoutMs`): `ok`, `degraded` (it
   * answers, but some of its nodes are down), or `down`; `detail` says what an operator should see.
   */
  health(timeoutMs: number): Promise<StorageHealth>;
  /** Engines of several nodes (Cassandra) tell when one goes down or comes back, and how many are up. */
  watchNodes?(listener: (node: string, up: boolean, counts: { up: number; down: number }) => void): { up: number; down: number };
  close(): Promise<void>;
}

export interface StorageHealth {
  status: 'ok' | 'degraded' | 'down';
  detail?: Record<string, unknown>;
}

/** Runs a check, `down` with its reason if it fails or takes longer than `timeoutMs`. */
export async function checked(timeoutMs: number, check: () => Promise<StorageHealth>): Promise<StorageHealth> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<StorageHealth>((resolve) => {
    timer = setTimeout(() => resolve({ status: 'down', detail: { reason: `no answer within ${timeoutMs} ms` } }), timeoutMs);
  });
  try {
    return await Promise.race([check().catch((e: unknown) => ({ status: 'down' as const, detail: { reason: (e as Error)?.message ?? String(e) } })), late]);
  } finally {
    clearTimeout(timer);
  }
}
