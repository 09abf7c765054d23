import type { Predicate, QueryPlan } from '../query-plan.js';
import { q } from './cql-schema.js';

export interface CqlStatement {
  query: string;
  params: unknown[];
}

const OPS: Record<Predicate['op'], string> = { eq: '=', lt: '<', gt: '>', le: '<=', ge: '>=' };

function whereKey(key: Record<string, unknown>): { clause: string; params: unknown[] } {
  const cols = Object.keys(key);
  return { clause: cols.map((c) => `${q(c)} = ?`).join(' AND '), params: cols.map((c) => key[c]) };
}

/**
 * A query plan as CQL against one physical table, whose clustering columns are `clustering`
 * (declared order). Ordering is the table's own, or exactly its reverse: the plan was validated to
 * ask nothing else, and nothing that would need filtering.
 */
export function selectCql(
  table: string, plan: QueryPlan, columns: string[], clustering: { column: string; dir: 'asc' | 'desc' }[], distinct: boolean,
): CqlStatement {
  const where = plan.predicates.map((p) => `${q(p.column)} ${OPS[p.op]} ?`);
  const params = plan.predicates.map((p) => p.value);
  const declared = new Map(clustering.map((c) => [c.column, c.dir]));
  const reversed = plan.order.some((o) => declared.has(o.column) && declared.get(o.column) !== o.dir);
  const orderBy = reversed ? ` ORDER BY ${clustering.map((c) => `${q(c.column)} ${c.dir === 'asc' ? 'DESC' : 'ASC'}`).join(', ')}` : '';
  return {
    query: `SELECT ${distinct ? 'DISTINCT ' : ''}${columns.map(q).join(', ')} FROM ${table}${where.length ? ` WHERE ${where.join(' AND ')}` : ''}${orderBy}${plan.scoped ? ' ALLOW FILTERING' : ''}`,
    params,
  };
}

/** Insert of a row's keys and the regular columns a write names, with its expiry (undefined: not written here). */
export function insertRowCql(table: string, row: Record<string, unknown>, exp: bigint | undefined, ttl: number, ifNotExists: boolean): CqlStatement {
  const values = exp === undefined ? row : { ...row, _exp: exp };
  const columns = Object.keys(values);
  return {
    query: `INSERT INTO ${table} (${columns.map(q).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})${ifNotExists ? ' IF NOT EXISTS' : ''} USING TTL ?`,
    params: [...Object.values(values), ttl],
  };
}

/** An update of some columns of one row (all keys given) or of a partition's statics (hash keys given). */
export function updateCql(
  table: string, key: Record<string, unknown>, values: Record<string, unknown>, ttl: number | undefined, conditions: { column: string; value: unknown }[],
): CqlStatement {
  const w = whereKey(key);
  const sets = Object.keys(values);
  const ifs = conditions.map((c) => `${q(c.column)} = ?`);
  return {
    query: `UPDATE ${table}${ttl === undefined ? '' : ' USING TTL ?'} SET ${sets.map((c) => `${q(c)} = ?`).join(', ')} WHERE ${w.clause}${ifs.length ? ` IF ${ifs.join(' AND ')}` : ''}`,
    params: [...(ttl === undefined ? [] : [ttl]), ...Object.values(values), ...w.params, ...conditions.map((c) => c.value)],
  };
}

export function deleteCql(table: string, key: Record<string, unknown>): CqlStatement {
  const w = whereKey(key);
  return { query: `DELETE FROM ${table} WHERE ${w.clause}`, params: w.params };
}

export function readCql(table: string, key: Record<string, unknown>, columns: string[]): CqlStatement {
  const w = whereKey(key);
  return { query: `SELECT ${columns.map(q).join(', ')} FROM ${table} WHERE ${w.clause}`, params: w.params };
}
