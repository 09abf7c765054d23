import cassandra from 'cassandra-driver';
import { invalidInput, unavailable } from '../errors.js';

const { responseErrorCodes: codes } = cassandra.types;
const TRANSIENT = new Set([codes.unavailableException, codes.overloaded, codes.isBootstrapping, codes.readTimeout, codes.readFailure, codes.writeFailure]);

/**
 * What a replica answers at once while the cluster settles (a schema change on its way, a node
 * just gone): worth a second ask. Timeouts are not: each already took the server's whole timeout.
 */
const SETTLING = new Set([codes.readFailure, codes.writeFailure, codes.unavailableException, codes.overloaded, codes.isBootstrapping]);
const SETTLE_DELAYS_MS = [50, 200, 500];

/**
 * Runs an idempotent statement, asked again a few times (in about 0.75 s) while replicas answer
 * "failure" or "unavailable": a replica that has not yet applied a schema change fails a read
 * naming a column it does not know, and the driver's own retry policy does not ask again then.
 */
export async function retryTransient<T>(send: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await send();
    } catch (err) {
      const settling = err instanceof cassandra.errors.ResponseError && SETTLING.has(err.code);
      if (!settling || attempt >= SETTLE_DELAYS_MS.length) throw err;
      await new Promise((r) => setTimeout(r, SETTLE_DELAYS_MS[attempt]));
    }
  }
}

/**
 * The driver's errors in storage terms. A timed-out conditional write may still have been applied
 * (Paxos had proposed it): it is "unknown", never a failed condition, so a client retries rather
 * than concluding that someone else won.
 */
export function mapDriverError(err: unknown, pagingState: boolean): unknown {
  // Left as it is for the table operation to reload its definitions and try again.
  if (isStaleSchema(err)) return err;
  if (err instanceof cassandra.errors.ResponseError) {
    if (err.code === codes.writeTimeout) {
      const cas = (err as { writeType?: string }).writeType === 'CAS';
      return cas
        ? unavailable('The conditional write timed out: it may or may not have been applied. Read, then retry if needed.', 'write-outcome-unknown')
        : unavailable('The write timed out before enough replicas acknowledged it; it may be applied later. Retry it.', 'write-timeout');
    }
    if (TRANSIENT.has(err.code)) return unavailable(`Storage could not answer: ${err.message}`);
    // Limits of one mutation (half a commit log segment) and of one request (16 MiB by default).
    if (/oversized mutation|request is too big/i.test(err.message)) {
      return invalidInput('The write is larger than the storage accepts in one request or mutation.', 'write-too-large');
    }
    if (pagingState && err.code === codes.invalid) return invalidInput('The paging token (next) is malformed or belongs to another query.', 'invalid-paging-token');
  }
  if (err instanceof cassandra.errors.NoHostAvailableError || err instanceof cassandra.errors.OperationTimedOutError || err instanceof cassandra.errors.BusyConnectionError) {
    return unavailable(`Storage could not be reached: ${err.message}`);
  }
  // The node went away while it had the request (socket closed, connection reset): a read may be
  // asked again; a write may or may not have been applied.
  if (err instanceof cassandra.errors.DriverError && /socket|connection|closed|reset/i.test(err.message)) {
    return unavailable(`A storage node went away with the request (${err.message}); a write may or may not have been applied. Retry it.`, 'node-lost');
  }
  return err;
}

/**
 * Whether the cluster says a table, keyspace or column a statement named is not there: a definition
 * changed elsewhere (statements prepared for a dropped table come back "unprepared", and preparing
 * them again fails on every host).
 */
export function isStaleSchema(err: unknown): boolean {
  if (err instanceof cassandra.errors.NoHostAvailableError) {
    const inner = Object.values((err.innerErrors ?? {}) as Record<string, unknown>);
    return inner.length > 0 && inner.every(isStaleSchema);
  }
  if (!(err instanceof cassandra.errors.ResponseError)) return false;
  if (err.code === codes.unprepared) return true;
  if (err.code === codes.invalid) return /unconfigured table|undefined column|keyspace .* does not exist|table .* does not exist/i.test(err.message);
  // A replica met a statement for a table dropped while it was on its way (the table's id is gone).
  return err.code === codes.serverError && /Unknown CF|UnknownTableException|Unknown keyspace/i.test(err.message);
}
