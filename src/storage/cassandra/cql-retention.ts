import { retentionOrder, rowsToExpire } from '../retention.js';
import type { ScalarType } from '../types.js';
import { compareScalars } from '../values.js';
import type { WritePlan } from '../write-plan.js';
import { timeuuidMillis } from '../../util/timeuuid.js';
import type { IndexUpkeep, Table } from './cql-indexes.js';
import type { CqlRow, CqlSession } from './cql-session.js';
import { deleteCql, insertRowCql, readCql } from './cql-statements.js';
import { expiryOf, fromCql } from './cql-values.js';

/** A table's retention policy applied after a row write (storage/retention.ts says which rows go). */
export class Retention {
  constructor(private readonly session: CqlSession, private readonly indexes: IndexUpkeep) {}

  /**
   * Lets go of the rows a retention policy no longer keeps: each is written again with the grace
   * TTL (Cassandra sets TTLs per write), or deleted at once without grace.
   */
  async apply(table: Table, plan: WritePlan, now: number): Promise<void> {
    const { info } = table;
    const policy = info.schema.revisionRetentionPolicy;
    if (policy.type !== 'latest' && policy.type !== 'latest_hash' && policy.type !== 'interval') return;
    const rows = (await this.session.all(readCql(table.main, plan.hashKey, [...info.range, '_exp']))).filter((r) => expiryOf(r._exp) === null && r[info.range[0]!] !== null);
    const normalized = (r: CqlRow) => info.range.map((c) => fromCql(info.schema.attributes[c]!, r[c]));
    // Newest first, as the SQL backends read them (every range key descending), or in the table's own order.
    const declared = retentionOrder(policy) === 'declared';
    const sorted = rows
      .map((r) => ({ row: r, values: normalized(r) }))
      .sort((a, b) => {
        for (let i = 0; i < info.range.length; i++) {
          const order = compareScalars(info.schema.attributes[info.range[i]!] as ScalarType, a.values[i], b.values[i]);
          if (order !== 0) return declared && info.rangeOrder[info.range[i]!] === 'asc' ? order : -order;
        }
        return 0;
      });
    const tid = info.tidColumn;
    const retained = sorted.map((r) => ({
      group: JSON.stringify(info.range.flatMap((c, i) => (c === tid ? [] : [String(r.values[i])]))),
      time: tid ? timeuuidMillis(r.values[info.range.indexOf(tid)] as string) : 0,
    }));
    for (const i of rowsToExpire(policy, retained)) {
      const key = Object.fromEntries([...info.hash, ...info.range].map((c) => [c, c in plan.hashKey ? plan.hashKey[c] : sorted[i]!.row[c]]));
      await this.expireRow(table, key, policy.grace_ttl, now);
    }
  }

  private async expireRow(table: Table, key: Record<string, unknown>, graceTtl: number, now: number): Promise<void> {
    const { info } = table;
    if (graceTtl === 0) {
      await this.indexes.removeEntries(table, key);
      await this.session.runWrites([deleteCql(table.main, key)]);
      return;
    }
    const [row] = (await this.session.run(readCql(table.main, key, info.regular.length > 0 ? info.regular : Object.keys(key)))).rows as unknown as CqlRow[];
    if (!row) return;
    const values = { ...key, ...Object.fromEntries(info.regular.filter((c) => row[c] !== null && row[c] !== undefined).map((c) => [c, row[c]])) };
    await this.session.runWrites([insertRowCql(table.main, values, BigInt(now + graceTtl * 1000), graceTtl, false)]);
    if (table.cql.indexes.size > 0) {
      const indexed = await this.indexes.indexedValues(table, key);
      if (indexed) await this.indexes.updateIndexes(table, indexed, undefined, graceTtl);
    }
  }
}
