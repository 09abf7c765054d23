import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { CassandraStorageConfig } from '../../src/config.js';
import { StorageError } from '../../src/storage/errors.js';
import { cassandraConfig, sleep } from '../helpers.js';

/**
 * The slow tier: three Cassandra nodes (the test command starts them on 127.0.0.1-3), replication
 * factor 3, QUORUM. Skipped unless the test command says where the cluster is.
 */
export const CLUSTER = process.env.WIKISTORE_TEST_CASSANDRA_CLUSTER?.split(',');
const run = promisify(execFile);
export const cassandra = (...args: string[]) => run('bash', ['scripts/cassandra.sh', ...args], { env: process.env });

export function clusterConfig(points = CLUSTER ?? [], consistency: Partial<CassandraStorageConfig['consistency']> = {}): CassandraStorageConfig {
  return cassandraConfig({
    contact_points: points,
    keyspace_prefix: 'wsc',
    replication: { datacenter1: 3 },
    consistency: { read: 'quorum', write: 'quorum', serial: 'serial', ...consistency },
  });
}

/**
 * Runs an operation as a client would: a 503 (too few replicas yet, or an unknown outcome while
 * the failure detector has not yet marked the node down) is retried. Returns the attempts made.
 */
export async function withRetries<T>(what: string, op: () => Promise<T>, deadline = Date.now() + 30_000): Promise<{ value: T; attempts: number }> {
  for (let attempts = 1; ; attempts++) {
    try {
      return { value: await op(), attempts };
    } catch (err) {
      const transient = err instanceof StorageError && err.kind === 'unavailable';
      if (!transient || Date.now() > deadline) throw new Error(`${what} failed after ${attempts} attempts: ${String(err)}`);
      await sleep(500);
    }
  }
}


/** The suites of this tier are skipped unless the test command says where the cluster is. */
export const CLUSTER_ONLY = { skip: CLUSTER ? false : 'the test command starts the cluster for this tier' } as const;
