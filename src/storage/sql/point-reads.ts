import { planQuery, type QueryPlan } from '../query-plan.js';
import type { TableInfo } from '../schema.js';
import type { Query } from '../types.js';
import { normalizeValue, type ToEngine } from '../values.js';
import { selectStatement, type Statement } from './dml.js';
import type { Dialect } from './driver.js';
import type { PhysicalNames } from './names.js';

const MAX_SHAPES_PER_TABLE = 16;

/** A key read planned once per table and set of key names: later reads only bring values. */
interface PointRead {
  plan: QueryPlan;
  sql: string;
  pinned: Statement['pinned'];
}

const SHAPE_FIELDS = new Set(['table', 'attributes', 'limit', 'index', 'proj', 'order']);
/** Operators a kept shape may hold, one a condition (`between` is two predicates: planned in full). */
const RANGE_OPERATORS = new Set(['eq', 'lt', 'gt', 'le', 'ge']);

const isScalar = (value: unknown): value is string | number | boolean => typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
/** The characters a shape is joined with: a name holding one is planned in full, never mistaken for another shape. */
const SEPARATORS = /[\u0000-\u0003]/;

/**
 * What a query's plan and statement depend on, when it is nothing but conditions on keys, each a
 * scalar or one comparison with a scalar (`{title: 'A', timestamp: {le: t}}`), perhaps on an
 * index, with a limit, a projection and an order: the index, the projection, the limit, the order,
 * and the key names and operators in the order given. Anything else: undefined.
 */
function shapeOf(query: Query): string | undefined {
  for (const field in query) if (!SHAPE_FIELDS.has(field)) return undefined;
  if (query.limit !== undefined && !Number.isInteger(query.limit)) return undefined;
  if (query.index !== undefined && (typeof query.index !== 'string' || SEPARATORS.test(query.index))) return undefined;
  const proj = query.proj;
  if (proj !== undefined && !(Array.isArray(proj) && proj.every((name) => typeof name === 'string' && !SEPARATORS.test(name)))) return undefined;
  const conditions = query.attributes;
  if (typeof conditions !== 'object' || conditions === null) return undefined;
  // The limit, the index, the projection and the order are written into the statement: shapes of their own.
  let shape = `${query.limit ?? ''}\u0001${query.index ?? ''}\u0001${proj === undefined ? '*' : (proj as string[]).join('\u0000')}\u0001`;
  if (query.order !== undefined) {
    const order = query.order as unknown;
    if (typeof order !== 'object' || order === null || Array.isArray(order)) return undefined;
    for (const [name, dir] of Object.entries(order)) {
      if (SEPARATORS.test(name) || (dir !== 'asc' && dir !== 'desc')) return undefined;
      shape += `${name}\u0002${dir}\u0000`;
    }
  }
  shape += '\u0001';
  for (const name in conditions) {
    if (SEPARATORS.test(name)) return undefined;
    const value = conditions[name];
    if (isScalar(value)) {
      shape += `${name}\u0000`;
      continue;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    const ops = Object.keys(value);
    if (ops.length !== 1 || !RANGE_OPERATORS.has(ops[0]!) || !isScalar((value as Record<string, unknown>)[ops[0]!])) return undefined;
    shape += `${name}\u0002${ops[0]}\u0000`;
  }
  return shape;
}

/** The operand of a kept predicate in a query of its shape. */
function operandOf(query: Query, column: string, op: string): unknown {
  const condition = query.attributes![column];
  return isScalar(condition) ? condition : (condition as Record<string, unknown>)[op];
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

  constructor(private readonly encode: ToEngine, private readonly recursiveSkipScan: boolean, private readonly indexHint?: Dialect['indexHint']) {}

  /** The plan and statement of `query`; a query that is not a plain key lookup is planned in full. */
  statement(info: TableInfo, names: PhysicalNames, query: Query, now: number, withEpoch = true): { plan: QueryPlan; stmt: Statement } {
    const shaped = shapeOf(query);
    const shape = shaped === undefined ? undefined : `${withEpoch ? 'e' : ''}\u0003${shaped}`;
    let reads = shape === undefined ? undefined : this.byTable.get(info);
    const kept = reads?.get(shape!);
    if (kept) {
      const params: unknown[] = [];
      for (const { column, op } of kept.plan.predicates) {
        const type = info.schema.attributes[column]!;
        const value = normalizeValue(type, operandOf(query, column, op), column);
        if (value === null) return this.planned(info, names, query, now, withEpoch);
        params.push(this.encode(type, value));
      }
      params.push(now);
      return { plan: kept.plan, stmt: { sql: kept.sql, params, pinned: kept.pinned } };
    }
    const { plan, stmt } = this.planned(info, names, query, now, withEpoch);
    if (shape !== undefined && isKeyReadWithParams(info, query, plan, stmt, now)) {
      if (!reads) this.byTable.set(info, (reads = new Map()));
      // Key names in every order a client could send: a few are kept, not all n! of them.
      if (reads.size < MAX_SHAPES_PER_TABLE) reads.set(shape, { plan, sql: stmt.sql, pinned: stmt.pinned });
    }
    return { plan, stmt };
  }

  private planned(info: TableInfo, names: PhysicalNames, query: Query, now: number, withEpoch: boolean): { plan: QueryPlan; stmt: Statement } {
    const plan = planQuery(info, query, this.encode);
    return { plan, stmt: selectStatement(info, names, plan, now, withEpoch, this.recursiveSkipScan, this.indexHint) };
  }
}

/**
 * A read of one row or of one partition (every hash key of the table or the index pinned), whose
 * parameters are its predicates' values, one each, and then `now`, as the kept path builds them.
 */
function isKeyReadWithParams(info: TableInfo, query: Query, plan: QueryPlan, stmt: Statement, now: number): boolean {
  if (plan.withTTL || plan.after || plan.distinct || stmt.params.length !== plan.predicates.length + 1) return false;
  const hash = query.index === undefined ? info.hash : (info.schema.secondaryIndexes[query.index] ?? []).filter((e) => e.type === 'hash').map((e) => e.attribute);
  if (!hash.every((h) => plan.predicates.some((p) => p.column === h && p.op === 'eq'))) return false;
  // One predicate a condition, in the order given: the kept path reads them back so.
  const columns = Object.keys(query.attributes ?? {});
  if (plan.predicates.length !== columns.length || plan.predicates.some((p, i) => p.column !== columns[i])) return false;
  return plan.predicates.every((p, i) => stmt.params[i] === p.value) && stmt.params[plan.predicates.length] === now;
}
