import { planQuery, type QueryPlan } from '../query-plan.js';
import type { TableInfo } from '../schema.js';
import type { Query } from '../types.js';
import { normalizeValue, type ToEngine } from '../values.js';
import { selectStatement, type Statement } from './dml.js';
import type { PhysicalNames } from './names.js';

const MAX_SHAPES_PER_TABLE = 16;

/** A point lookup planned once per table and set of key names: later lookups only bring values. */
interface PointRead {
  plan: QueryPlan;
  sql: string;
}

/**
 * The key names of a query that is nothing but scalar equality conditions (`{table, attributes}`),
 * in the order given: what its plan and statement depend on. Anything else: undefined.
 */
function conditionNames(query: Query): string | undefined {
  for (const field in query) if (field !== 'table' && field !== 'attributes') return undefined;
  const conditions = query.attributes;
  if (typeof conditions !== 'object' || conditions === null) return undefined;
  let names = '';
  for (const name in conditions) {
    const value = conditions[name];
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return undefined;
    names += `${name}\u0000`;
  }
  return names;
}

/**
 * Statements of point lookups (every key pinned), kept per table definition. Planning a query and
 * writing its SQL cost more than a tenth of an uncached SQLite point read; a point lookup's plan
 * differs from the next one's only in its key values, which are validated here as the planner would.
 * Statements read the schema epoch with the rows (see `selectStatement`'s `withEpoch`).
 */
export class PointReads {
  /** Keyed by the definition: a table migrated or reloaded has a new one, and its statements go with the old. */
  private readonly byTable = new WeakMap<TableInfo, Map<string, PointRead>>();

  constructor(private readonly encode: ToEngine) {}

  /** The plan and statement of `query`; a query that is not a plain point lookup is planned in full. */
  statement(info: TableInfo, names: PhysicalNames, query: Query, now: number): { plan: QueryPlan; stmt: Statement } {
    const shape = conditionNames(query);
    let reads = shape === undefined ? undefined : this.byTable.get(info);
    const kept = reads?.get(shape!);
    if (kept) {
      const params: unknown[] = [];
      for (const { column } of kept.plan.predicates) {
        const type = info.schema.attributes[column]!;
        params.push(this.encode(type, normalizeValue(type, query.attributes![column], column)));
      }
      params.push(now);
      return { plan: kept.plan, stmt: { sql: kept.sql, params } };
    }
    const plan = planQuery(info, query, this.encode);
    const stmt = selectStatement(info, names, plan, now, true);
    if (shape !== undefined && isPointWithParams(plan, stmt, now)) {
      if (!reads) this.byTable.set(info, (reads = new Map()));
      // Key names in every order a client could send: a few are kept, not all n! of them.
      if (reads.size < MAX_SHAPES_PER_TABLE) reads.set(shape, { plan, sql: stmt.sql });
    }
    return { plan, stmt };
  }
}

/** A point lookup whose parameters are its key values and then `now`, as the kept path builds them. */
function isPointWithParams(plan: QueryPlan, stmt: Statement, now: number): boolean {
  if (plan.order.length > 0 || plan.withTTL || stmt.params.length !== plan.predicates.length + 1) return false;
  return plan.predicates.every((p, i) => p.op === 'eq' && stmt.params[i] === p.value) && stmt.params[plan.predicates.length] === now;
}
