import { StorageError } from './errors.js';
import { ForwardingStorage } from './forwarding-storage.js';
import type { TableStorage } from './table-storage.js';
import type { Delete, Query, QueryResult, TableSchema, Write } from './types.js';

/** Where a storage operation's time and failures are reported (Prometheus, in the service). */
export interface StorageObserver {
  observe(operation: string, table: string, seconds: number): void;
  failed(operation: string, kind: string): void;
}

/** A storage failure's kind: the table API's (invalid, not-found, condition-failed, unavailable), else `other`. */
const kindOf = (err: unknown) => (err instanceof StorageError ? err.kind : 'other');

/**
 * Table storage that times every operation per table and counts failures by kind, so an
 * operator sees what storage costs and when it fails, whatever the backend.
 */
export class MeasuredStorage extends ForwardingStorage {
  constructor(inner: TableStorage, private readonly observer: StorageObserver) {
    super(inner);
  }


  private async measured<T>(operation: string, table: string, work: () => Promise<T>): Promise<T> {
    const started = process.hrtime.bigint();
    try {
      return await work();
    } catch (err) {
      this.observer.failed(operation, kindOf(err));
      throw err;
    } finally {
      this.observer.observe(operation, table, Number(process.hrtime.bigint() - started) / 1e9);
    }
  }

  override createTable(domain: string, name: string, rawSchema: unknown): Promise<'created' | 'updated' | 'unchanged'> {
    return this.measured('create_table', name, () => this.inner.createTable(domain, name, rawSchema));
  }

  override getSchema(domain: string, name: string): Promise<TableSchema & { domain: string }> {
    return this.measured('get_schema', name, () => this.inner.getSchema(domain, name));
  }

  override dropTable(domain: string, name: string): Promise<void> {
    return this.measured('drop_table', name, () => this.inner.dropTable(domain, name));
  }

  override listTables(domain: string): Promise<string[]> {
    return this.measured('list_tables', '', () => this.inner.listTables(domain));
  }

  override get(domain: string, query: Query): Promise<QueryResult> {
    return this.measured('get', query.table, () => this.inner.get(domain, query));
  }

  override put(domain: string, write: Write): Promise<void> {
    return this.measured('put', write.table, () => this.inner.put(domain, write));
  }

  override delete(domain: string, del: Delete): Promise<void> {
    return this.measured('delete', del.table, () => this.inner.delete(domain, del));
  }

  override sweepExpired(): Promise<number> {
    return this.measured('sweep_expired', '', () => this.inner.sweepExpired());
  }
}
