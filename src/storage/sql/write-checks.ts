import { isDeepStrictEqual } from 'node:util';
import { conditionFailed } from '../errors.js';
import { retentionOrder, rowsToExpire } from '../retention.js';
import type { TableInfo } from '../schema.js';
import { sortableToTimeuuid, timeuuidMillis } from '../../util/timeuuid.js';
import { fromStorage, toStorage, type ValueCodec } from '../values.js';
import type { WritePlan } from '../write-plan.js';
import { exec, expireRowStatement, read, readRowStatement, readStaticStatement, retentionCandidatesStatement } from './dml.js';
import type { SqlExecutor, SqlRow } from './driver.js';
import type { PhysicalNames } from './names.js';


/**
 * A conditional write's conditions, read inside its transaction (under its partition's lock, the
 * row locked as it is read where the engine needs that: `locking`); a failed one is a 412.
 * Whether the row was there (live), when it was read.
 */
export async function checkConditions(
  tx: SqlExecutor, info: TableInfo, names: PhysicalNames, plan: WritePlan, now: number, codec: ValueCodec, locking = '',
): Promise<{ rowLive?: boolean }> {
  let rowLive: boolean | undefined;
  const key = plan.row && Object.fromEntries([...info.hash, ...info.range].map((k) => [k, plan.row![k]]));
  const rowConditions = plan.conditions.filter((c) => !c.isStatic);
  const staticConditions = plan.conditions.filter((c) => c.isStatic);
  if (key && (plan.notExists || rowConditions.length > 0)) {
    const [current] = await read(tx, readRowStatement(names, key, rowConditions.map((c) => c.column), now, locking));
    rowLive = current !== undefined;
    if (plan.notExists && current) throw conditionFailed('The row already exists.', 'row-exists');
    compare(info, rowConditions, current, codec);
  }
  if (staticConditions.length > 0) {
    const [current] = await read(tx, readStaticStatement(names, plan.hashKey, staticConditions.map((c) => c.column)));
    compare(info, staticConditions, current, codec);
  }
  return { rowLive };
}

function compare(info: TableInfo, conditions: WritePlan['conditions'], current: SqlRow | undefined, codec: ValueCodec): void {
  for (const { column, expected } of conditions) {
    const type = info.schema.attributes[column]!;
    const actual = current ? fromStorage(type, current[column], codec) : null;
    const wanted = expected === null ? null : fromStorage(type, toStorage(type, expected, codec), codec);
    if (!isDeepStrictEqual(actual, wanted)) {
      throw conditionFailed(`The condition on '${column}' does not hold.`, 'condition-failed');
    }
  }
}

/**
 * The retention pass after a row write: rows of the partition the policy no longer keeps get the
 * grace TTL (or go at once). Run under the partition's lock, so concurrent passes see each other's rows.
 */
export async function applyRetention(
  tx: SqlExecutor, info: TableInfo, names: PhysicalNames, hashKey: Record<string, unknown>, now: number,
): Promise<void> {
  const policy = info.schema.revisionRetentionPolicy;
  if (policy.type === 'all' || policy.type === 'ttl' || info.range.length === 0) return;
  const rows = await read(tx, retentionCandidatesStatement(info, names, hashKey, retentionOrder(policy)));
  const tid = info.tidColumn;
  // Engines hand keys back in their own types (BigInt, numeric strings): grouped as text.
  const retained = rows.map((r) => ({
    group: JSON.stringify(info.range.filter((c) => c !== tid).map((c) => String(r[c]))),
    time: tid ? timeuuidMillis(sortableToTimeuuid(r[tid] as string)) : 0,
  }));
  for (const i of rowsToExpire(policy, retained)) {
    const key = { ...hashKey, ...Object.fromEntries(info.range.map((c) => [c, rows[i]![c]])) };
    await exec(tx, expireRowStatement(names, key, now + policy.grace_ttl * 1000));
  }
}
