import cassandra from 'cassandra-driver';
import { mapDriverError, retryTransient } from './cql-errors.js';
import type { CqlStatement } from './cql-statements.js';

const { consistencies } = cassandra.types;

export type CqlRow = Record<string, unknown>;

export function consistency(name: string): number {
  const level = (consistencies as unknown as Record<string, number>)[name.replace(/_(\w)/g, (_, c: string) => c.toUpperCase())];
  if (level === undefined) throw new Error(`Unknown Cassandra consistency level '${name}'.`);
  return level;
}

/** Tries of a schema change that builds on another process's change not yet everywhere (about 5 s in all). */
const DDL_ATTEMPTS = 10;

/** How long a schema change waits for every node to hold it (the driver's own default). */
const SCHEMA_AGREEMENT_MS = 10_000;
/** Between two looks at the nodes' schema versions while a change spreads. */
const SCHEMA_POLL_MS = 20;

/**
 * The driver's options this session needs: it waits for schema agreement itself, more often than
 * the driver's every 500 ms (on three nodes a table's creation took 1.2 s with the driver's wait,
 * 0.24 s with this one's).
 */
export const SESSION_CLIENT_OPTIONS = { protocolOptions: { maxSchemaAgreementWaitSeconds: 0 } } as const;

const LOCAL_SCHEMA_VERSION = 'SELECT schema_version FROM system.local';

/** A lightweight transaction (compare-and-set): not idempotent. */
const CONDITIONAL = /\sIF\s+(?:NOT\s+EXISTS|["\w])/i;

/**
 * Statements sent to the cluster as the table storage needs them: reads at the read consistency,
 * asked again while replicas settle; writes at the write consistency, idempotent unless
 * conditional; schema changes at ALL, waited for while another process's change spreads.
 */
export class CqlSession {
  /** The tail of each partition's chain of conditional writes from this process. */
  private readonly casChains = new Map<string, Promise<unknown>>();

  constructor(readonly client: cassandra.Client, private readonly read: number, private readonly write: number) {}

  /**
   * Runs a partition's conditional writes from this process one after another. Paxos rounds racing
   * for one partition time out under contention (their outcome then unknown), where in turn each
   * takes a few milliseconds; other processes still race, and a timeout is still a 503.
   */
  async oneAtATime<T>(partition: string, op: () => Promise<T>): Promise<T> {
    const previous = this.casChains.get(partition) ?? Promise.resolve();
    const mine = previous.then(op, op);
    const tail = mine.catch(() => undefined);
    this.casChains.set(partition, tail);
    try {
      return await mine;
    } finally {
      if (this.casChains.get(partition) === tail) this.casChains.delete(partition);
    }
  }

  async run(statement: CqlStatement, options: cassandra.QueryOptions = {}): Promise<cassandra.types.ResultSet> {
    try {
      // Reads change nothing: the driver may send one again to another node when its node goes away.
      return await retryTransient(() => this.client.execute(statement.query, statement.params, { consistency: this.read, isIdempotent: true, ...options }));
    } catch (err) {
      throw mapDriverError(err, options.pageState !== undefined);
    }
  }

  async runWrites(statements: CqlStatement[]): Promise<cassandra.types.ResultSet> {
    // Writing the same values again is harmless, so a write the driver saw no answer to (its node
    // killed) is sent to another node; a conditional one is not (a second try would see its own
    // first try and fail): its unknown outcome is the caller's 503.
    const isIdempotent = !statements.some((s) => CONDITIONAL.test(s.query));
    const send = () =>
      statements.length === 1
        ? this.client.execute(statements[0]!.query, statements[0]!.params, { consistency: this.write, isIdempotent })
        : // One partition: an unlogged batch is atomic and isolated there, and conditions apply to all of it.
          this.client.batch(statements, { consistency: this.write, logged: false, isIdempotent });
    try {
      return await (isIdempotent ? retryTransient(send) : send());
    } catch (err) {
      throw mapDriverError(err, false);
    }
  }

  /**
   * A schema change. Another process may have just made what this one builds on (a keyspace made
   * by a process starting beside it): a coordinator that has not heard of it yet answers "does
   * not exist" until the change reaches it, so that is waited for (briefly), not failed on.
   */
  async ddl(query: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.client.execute(query, [], { prepare: false, consistency: consistencies.all });
        await this.schemaAgreement();
        return;
      } catch (err) {
        const notYetThere = err instanceof cassandra.errors.ResponseError && /(does not|doesn't) exist|unconfigured table/i.test(err.message);
        if (!notYetThere || attempt >= DDL_ATTEMPTS) throw mapDriverError(err, false);
        await new Promise((r) => setTimeout(r, 100 * attempt));
      }
    }
  }

  /**
   * Until every node up holds the same schema, each asked for its own version. The driver's own
   * check compares one node's view of the others, which after a change can still show every node
   * on the version before it (seen: "agreed" while two nodes of three lacked the new table). A
   * node that does not answer is left out, as a node down would be.
   */
  private async schemaAgreement(): Promise<void> {
    const hosts = this.client.hosts.values().filter((h) => h.isUp());
    if (hosts.length <= 1) return;
    const versionOf = (host: cassandra.Host) =>
      this.client.execute(LOCAL_SCHEMA_VERSION, [], { host, prepare: true }).then((r) => String(r.rows[0]?.schema_version), () => undefined);
    const deadline = Date.now() + SCHEMA_AGREEMENT_MS;
    for (;;) {
      const versions = (await Promise.all(hosts.map(versionOf))).filter((v) => v !== undefined);
      if (new Set(versions).size <= 1 || Date.now() >= deadline) return;
      await new Promise((r) => setTimeout(r, SCHEMA_POLL_MS));
    }
  }

  /** The rows a statement selects, a page at a time: a whole table's keys without holding them all. */
  async *pages(statement: CqlStatement): AsyncGenerator<CqlRow[]> {
    let pageState: string | undefined;
    do {
      const result = await this.run(statement, { fetchSize: 1000, pageState });
      yield result.rows as unknown as CqlRow[];
      pageState = result.pageState ?? undefined;
    } while (pageState);
  }

  /** Every row a statement selects, page by page (retention candidates, index upkeep). */
  async all(statement: CqlStatement): Promise<CqlRow[]> {
    const rows: CqlRow[] = [];
    for await (const page of this.pages(statement)) rows.push(...page);
    return rows;
  }

}
