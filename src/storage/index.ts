import type { StorageConfig } from '../config.js';
import type { TableStorage } from './table-storage.js';

/** Query answers SQLite keeps by default: the hot rows of a busy wiki, well inside the memory budget. */
const DEFAULT_READ_CACHE_MB = 16;

/** Opens the configured backend; each engine's driver is loaded only when it is used. */
export async function openStorage(config: StorageConfig): Promise<TableStorage> {
  const { SqlTableStorage } = await import('./sql/sql-table-storage.js');
  if (config.backend === 'cassandra') {
    const { CassandraTableStorage } = await import('./cassandra/cassandra-storage.js');
    return CassandraTableStorage.open(config);
  }
  if (config.backend === 'mariadb') {
    const { MariadbDriver } = await import('./mariadb/mariadb-driver.js');
    return SqlTableStorage.open(await MariadbDriver.open(config.url, config.pool_size));
  }
  if (config.backend === 'postgres') {
    const { PostgresDriver } = await import('./postgres/postgres-driver.js');
    return SqlTableStorage.open(new PostgresDriver(config.url, config.pool_size));
  }
  const { SqliteDriver } = await import('./sqlite/sqlite-driver.js');
  return SqlTableStorage.open(new SqliteDriver(config.path), { readCacheBytes: Math.floor((config.read_cache_mb ?? DEFAULT_READ_CACHE_MB) * 1024 * 1024) });
}

export type { TableStorage };
