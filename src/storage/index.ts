import type { StorageConfig } from '../config.js';
import type { TableStorage } from './table-store.js';

/** Opens the configured backend; each engine's driver is loaded only when it is used. */
export async function openStorage(config: StorageConfig): Promise<TableStorage> {
  const { SqlTableStorage } = await import('./table-storage.js');
  if (config.backend === 'cassandra') {
    const { CassandraTableStorage } = await import('./cassandra/cassandra-storage.js');
    return CassandraTableStorage.open(config);
  }
  if (config.backend === 'postgres') {
    const { PostgresDriver } = await import('./postgres/postgres-driver.js');
    return SqlTableStorage.open(new PostgresDriver(config.url, config.pool_size));
  }
  const { SqliteDriver } = await import('./sqlite/sqlite-driver.js');
  return SqlTableStorage.open(new SqliteDriver(config.path));
}

export type { TableStorage };
