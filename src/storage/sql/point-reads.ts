import { planQuery, type QueryPlan } from '../query-plan.js';
import type { TableInfo } from '../schema.js';
import type { Query } from '../types.js';
import { normalizeValue, type ToEngine } from '../values.js';
import { selectStatement, type Statement } from './dml.js';
import type { PhysicalNames } from './names.js';

const MAX_SHAPES_PER_TABLE = 16;

/** A key read planned once per table and set of key names: later reads only bring values. */
interface PointRead {
  plan: QueryPlan;
  sql: string;
  pinned: Statement['pinned'];
}

/**
 * The key names of a query that is nothing but scalar equality conditions and perhaps a limit
 * (`{table, attributes, limit}`), in the order given: what its plan and statement depend on.
 * Anything else: undefined.
 */
function conditionNames(query: Query): string | undefined {
  for (const field in query) if (field !== 'table' && field !== 'attributes' && field !== 'limit') return undefined;
  if (query.limit !== undefined && !Number.isInteger(query.limit)) return undefined;
  const conditions = query.attributes;
  if (typeof conditions !== 'object' || conditions === null) return undefined;
  // The limit is written into the statement: a shape of its own.
  let names = query.limit === undefined ? '' : `${query.limit}\u0001`;
  for (const name in conditions) {
    const value = conditions[name];
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return undefined;
    names += `${name}\u0000`;
  }
  return names;
}

/**
 * Statements of point lookups and partition reads (every hash key pinned by equality, perhaps a
 * limit), kept per table definition. Planning a query and writing its SQL cost more than a tenth
 * of an uncached SQLite point read; such a read's plan differs from the next one's only in its key
 * values, which are validated here as the planner would. `withEpoch`: statements that read the
 * schema epoch with the rows (see `selectStatement`).
 */
export class PointReads {
  /** Keyed by the definition: a table migrated or reloaded has a new one, and its statements go with the old. */
  private readonly byTable = new WeakMap<TableInfo, Map<string, PointRead>>();

  constructor(private readonly encode: ToEngine, private readonly recursiveSkipScan: boolean) {}

  /** The plan and statement of `query`; a query that is not a plain key lookup is planned in full. */
  statement(info: TableInfo, names: PhysicalNames, query: Query, now: number, withEpoch = true): { plan: QueryPlan; stmt: Statement } {
    const names0 = conditionNames(query);
    const shape = names0 === undefined ? undefined : `${withEpoch ? 'e' : ''}\u0002${names0}`;
    let reads = shape === undefined ? undefined : this.byTable.get(info);
    const kept = reads?.get(shape!);
    if (kept) {
      const params: unknown[] = [];
      for (const { column } of kept.plan.predicates) {
        const type = info.schema.attributes[column]!;
        params.push(this.encode(type, normalizeValue(type, query.attributes![column], column)));
      }
      params.push(now);
      return { plan: kept.plan, stmt: { sql: kept.sql, params, pinned: kept.pinned } };
    }
    const plan = planQuery(info, query, this.encode);
    const stmt = selectStatement(info, names, plan, now, withEpoch, this.recursiveSkipScan);
    if (shape !== undefined && isKeyReadWithParams(info, plan, stmt, now)) {
      if (!reads) this.byTable.set(info, (reads = new Map()));
      // Key names in every order a client could send: a few are kept, not all n! of them.
      if (reads.size < MAX_SHAPES_PER_TABLE) reads.set(shape, { plan, sql: stmt.sql, pinned: stmt.pinned });
    }
    return { plan, stmt };
  }
}

/**
 * A read of one row or one partition (every hash key pinned) whose parameters are its key values
 * and then `now`, as the kept path builds them.
 */
function isKeyReadWithParams(info: TableInfo, plan: QueryPlan, stmt: Statement, now: number): boolean {
  if (plan.withTTL || plan.after || stmt.params.length !== plan.predicates.length + 1) return false;
  if (!info.hash.every((h) => plan.predicates.some((p) => p.column === h && p.op === 'eq'))) return false;
  return plan.predicates.every((p, i) => p.op === 'eq' && stmt.params[i] === p.value) && stmt.params[plan.predicates.length] === now;
}
