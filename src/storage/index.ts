import type { StorageConfig } from '../config.js';
import { TableStorage } from './table-storage.js';

/** Opens the configured backend; each engine's driver is loaded only when it is used. */
export async function openStorage(config: StorageConfig): Promise<TableStorage> {
  if (config.backend === 'postgres') {
    const { PostgresDriver } = await import('./postgres/postgres-driver.js');
    return TableStorage.open(new PostgresDriver(config.url, config.pool_size));
  }
  const { SqliteDriver } = await import('./sqlite/sqlite-driver.js');
  return TableStorage.open(new SqliteDriver(config.path));
}

export { TableStorage };
