import type { StorageHealth, TableStorage } from './table-storage.js';
import type { Delete, Query, QueryResult, TableSchema, Write } from './types.js';

/** Table storage that hands every operation to another: the base of layers that change a few (measuring, storage groups). */
export class ForwardingStorage implements TableStorage {
  constructor(protected readonly inner: TableStorage) {}

  get backend(): string {
    return this.inner.backend;
  }

  get expiresNatively(): boolean {
    return this.inner.expiresNatively;
  }

  createTable(domain: string, name: string, rawSchema: unknown): Promise<'created' | 'updated' | 'unchanged'> {
    return this.inner.createTable(domain, name, rawSchema);
  }

  getSchema(domain: string, name: string): Promise<TableSchema & { domain: string }> {
    return this.inner.getSchema(domain, name);
  }

  dropTable(domain: string, name: string): Promise<void> {
    return this.inner.dropTable(domain, name);
  }

  listTables(domain: string): Promise<string[]> {
    return this.inner.listTables(domain);
  }

  get(domain: string, query: Query): Promise<QueryResult> {
    return this.inner.get(domain, query);
  }

  put(domain: string, write: Write): Promise<void> {
    return this.inner.put(domain, write);
  }

  delete(domain: string, del: Delete): Promise<void> {
    return this.inner.delete(domain, del);
  }

  sweepExpired(): Promise<number> {
    return this.inner.sweepExpired();
  }

  health(timeoutMs: number): Promise<StorageHealth> {
    return this.inner.health(timeoutMs);
  }

  get watchNodes(): TableStorage['watchNodes'] {
    return this.inner.watchNodes?.bind(this.inner);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
