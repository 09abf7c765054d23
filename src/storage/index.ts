import type { StorageConfig } from '../config.js';
import { PostgresDriver } from './postgres/postgres-driver.js';
import { SqliteDriver } from './sqlite/sqlite-driver.js';
import { TableStorage } from './table-storage.js';

export function openStorage(config: StorageConfig): Promise<TableStorage> {
  const driver = config.backend === 'postgres' ? new PostgresDriver(config.url, config.pool_size) : new SqliteDriver(config.path);
  return TableStorage.open(driver);
}

export { TableStorage };
