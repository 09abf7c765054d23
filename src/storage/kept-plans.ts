import type { QueryPlan } from './query-plan.js';
import type { TableInfo } from './schema.js';
import type { Query } from './types.js';
import { normalizeValue, type ToEngine } from './values.js';

const MAX_SHAPES_PER_TABLE = 16;

const SHAPE_FIELDS = new Set(['table', 'attributes', 'limit', 'index', 'proj', 'order']);
/** Operators a kept shape may hold, one a condition (`between` is two predicates: planned in full). */
const RANGE_OPERATORS = new Set(['eq', 'lt', 'gt', 'le', 'ge']);

const isScalar = (value: unknown): value is string | number | boolean => typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
/** The characters a shape is joined with: a name holding one is planned in full, never mistaken for another shape. */
const SEPARATORS = /[\u0000-\u0003]/;

/**
 * What a query's plan depends on, when it is nothing but conditions on keys, each a scalar or one
 * comparison with a scalar (`{title: 'A', timestamp: {le: t}}`), perhaps on an index, with a
 * limit, a projection and an order: the index, the projection, the limit, the order, and the key
 * names and operators in the order given. Anything else (paging, TTLs, distinct): undefined.
 */
function shapeOf(query: Query): string | undefined {
  for (const field in query) if (!SHAPE_FIELDS.has(field)) return undefined;
  if (query.limit !== undefined && !Number.isInteger(query.limit)) return undefined;
  if (query.index !== undefined && (typeof query.index !== 'string' || SEPARATORS.test(query.index))) return undefined;
  const proj = query.proj;
  if (proj !== undefined && !(Array.isArray(proj) && proj.every((name) => typeof name === 'string' && !SEPARATORS.test(name)))) return undefined;
  const conditions = query.attributes;
  if (typeof conditions !== 'object' || conditions === null) return undefined;
  // The limit, the index, the projection and the order shape the statement: shapes of their own.
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
 * A read of one row or of one partition (every hash key of the table or the index pinned by eq),
 * one predicate a condition in the order given: the kept path reads the values back so.
 */
function isKeyRead(info: TableInfo, query: Query, plan: QueryPlan): boolean {
  if (plan.withTTL || plan.after || plan.distinct) return false;
  const hash = query.index === undefined ? info.hash : (info.schema.secondaryIndexes[query.index] ?? []).filter((e) => e.type === 'hash').map((e) => e.attribute);
  if (!hash.every((h) => plan.predicates.some((p) => p.column === h && p.op === 'eq'))) return false;
  const columns = Object.keys(query.attributes ?? {});
  return plan.predicates.length === columns.length && plan.predicates.every((p, i) => p.column === columns[i]);
}

/** A plan kept for a shape, and what the engine made of it (its statement). */
export interface Kept<M> {
  /** Its predicates hold the values of the read that was planned: take a read's own from `values`. */
  plan: QueryPlan;
  made: M;
}

/** The plan of a kept shape with a read's own key values in its predicates. */
export function withValues(plan: QueryPlan, values: unknown[]): QueryPlan {
  return { ...plan, predicates: plan.predicates.map((p, i) => ({ ...p, value: values[i] })) };
}

/**
 * Plans of key reads (point lookups and partition reads) kept per table definition and shape,
 * with what the engine made of each (its statement). Planning a query costs more than a tenth of
 * a point read on an engine that answers from memory; such a read's plan differs from the next
 * one's only in its key values, which are validated here as the planner would. The engine plans
 * a read not found (`planQuery`) and keeps it; nothing is allocated for a read found but its values.
 */
export class KeptPlans<M> {
  /** Keyed by the definition: a table migrated or reloaded has a new one, and its plans go with the old. */
  private readonly byTable = new WeakMap<TableInfo, Map<string, Kept<M>>>();

  constructor(private readonly encode: ToEngine) {}

  /**
   * The kept plan of `query`'s shape and the query's key values (validated and encoded), or
   * undefined: not a shape kept, or a value the planner would refuse (planned in full, it is
   * refused as the first time). `variant`: what else the engine's statement depends on.
   */
  find(info: TableInfo, query: Query, variant: string): { kept: Kept<M>; values: unknown[] } | undefined {
    const shapes = this.byTable.get(info);
    if (!shapes) return undefined;
    const shape = shapeOf(query);
    const kept = shape === undefined ? undefined : shapes.get(`${variant}\u0003${shape}`);
    if (!kept) return undefined;
    const values: unknown[] = [];
    for (const { column, op } of kept.plan.predicates) {
      const type = info.schema.attributes[column]!;
      const value = normalizeValue(type, operandOf(query, column, op), column);
      if (value === null) return undefined;
      values.push(this.encode(type, value));
    }
    return { kept, values };
  }

  /** Keeps `plan`, just made for `query`, with the engine's statement, if it is a key read of a shape. */
  keep(info: TableInfo, query: Query, variant: string, plan: QueryPlan, made: M): void {
    const shape = shapeOf(query);
    if (shape === undefined || !isKeyRead(info, query, plan)) return;
    let shapes = this.byTable.get(info);
    if (!shapes) this.byTable.set(info, (shapes = new Map()));
    // Key names in every order a client could send: a few are kept, not all n! of them.
    if (shapes.size < MAX_SHAPES_PER_TABLE) shapes.set(`${variant}\u0003${shape}`, { plan, made });
  }
}
