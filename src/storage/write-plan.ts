import { invalidInput } from './errors.js';
import { IMPLICIT_TID, type TableInfo } from './schema.js';
import { own, type Delete, type Write } from './types.js';
import { normalizeValue, type ToEngine } from './values.js';
import { newTid } from '../util/tid.js';

export interface Condition {
  column: string;
  isStatic: boolean;
  /** The expected value, normalized (null: absent). */
  expected: unknown;
}

export interface WritePlan {
  hashKey: Record<string, unknown>;
  /** Hash and range keys plus regular columns, in storage form; undefined for a static-only write. */
  row?: Record<string, unknown>;
  statics: Record<string, unknown>;
  ttl?: number;
  notExists: boolean;
  conditions: Condition[];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Validates a write against the schema: every key present, no unknown attribute, every type right. */
export function planWrite(info: TableInfo, write: Write, encode: ToEngine): WritePlan {
  const { schema } = info;
  if (!isObject(write.attributes)) throw invalidInput('A write needs an attributes object.', 'invalid-write');
  const values: Record<string, unknown> = {};
  let ttl: number | undefined;
  for (const [name, value] of Object.entries(write.attributes)) {
    if (name === '_ttl') {
      if (!Number.isInteger(value) || (value as number) < 1) throw invalidInput('_ttl must be a positive number of seconds.', 'invalid-write');
      ttl = value as number;
      continue;
    }
    const type = own(schema.attributes, name);
    if (!type) throw invalidInput(`Table '${schema.table}' has no attribute '${name}'.`, 'unknown-attribute');
    values[name] = encode(type, normalizeValue(type, value, name));
  }
  // Loops, not chains of arrays: every write of every engine is planned here.
  const hashKey: Record<string, unknown> = {};
  for (const h of info.hash) {
    const v = values[h];
    if (v === null || v === undefined) throw invalidInput(`The hash key '${h}' is missing.`, 'missing-key');
    hashKey[h] = v;
  }
  const statics: Record<string, unknown> = {};
  let hasStatics = false;
  for (const s of info.statics) {
    if (s in values) {
      statics[s] = values[s];
      hasStatics = true;
    }
  }
  const givenRange = info.range.filter((r) => values[r] !== null && values[r] !== undefined);
  const staticOnly = givenRange.length === 0 && hasStatics && info.regular.every((c) => !(c in values));
  // A row's time-uuid left out is made now, as RESTBase did: the implicit '_tid', and a timeuuid
  // range key (the render's tid of a revisioned table) when it is the only key missing.
  const tid = info.tidColumn ?? (own(schema.attributes, IMPLICIT_TID) !== undefined ? IMPLICIT_TID : undefined);
  const tidIsKey = tid !== undefined && info.range.includes(tid);
  if (!staticOnly && tid !== undefined && (values[tid] === undefined || values[tid] === null) && (!tidIsKey || info.range.every((r) => r === tid || givenRange.includes(r)))) {
    values[tid] = encode('timeuuid', newTid());
    if (tidIsKey) givenRange.push(tid);
  }
  let row: Record<string, unknown> | undefined;
  if (!staticOnly) {
    if (givenRange.length < info.range.length) {
      const missing = info.range.find((r) => !givenRange.includes(r));
      if (missing) throw invalidInput(`The range key '${missing}' is missing.`, 'missing-key');
    }
    row = {};
    for (const c of info.hash) row[c] = values[c];
    for (const c of info.range) row[c] = values[c];
    for (const c of info.regular) if (c in values) row[c] = values[c];
  }

  let notExists = false;
  const conditions: Condition[] = [];
  if (write.if === 'not exists') {
    if (staticOnly) throw invalidInput("'if: not exists' needs the full primary key.", 'invalid-write');
    notExists = true;
  } else if (write.if !== undefined && write.if !== null) {
    if (!isObject(write.if)) throw invalidInput("'if' must be \"not exists\" or {attribute: {eq: value}}.", 'invalid-write');
    for (const [column, cond] of Object.entries(write.if)) {
      const type = own(schema.attributes, column);
      if (!type) throw invalidInput(`Condition on unknown attribute '${column}'.`, 'unknown-attribute');
      if (!isObject(cond) || !('eq' in cond) || Object.keys(cond).length !== 1) {
        throw invalidInput(`Condition on '${column}' must be {eq: value}.`, 'invalid-write');
      }
      const isStatic = info.statics.includes(column);
      if (!isStatic && !row) throw invalidInput(`A condition on '${column}' needs the full primary key.`, 'invalid-write');
      conditions.push({ column, isStatic, expected: normalizeValue(type, cond.eq, column) });
    }
  }
  return { hashKey, row, statics, ttl, notExists, conditions };
}

export interface DeletePlan {
  hashKey: Record<string, unknown>;
  key: Record<string, unknown>;
  wholePartition: boolean;
}

export function planDelete(info: TableInfo, del: Delete, encode: ToEngine): DeletePlan {
  if (!isObject(del.attributes)) throw invalidInput('A delete needs an attributes object naming the key.', 'invalid-delete');
  const key: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(del.attributes)) {
    if (!info.hash.includes(name) && !info.range.includes(name)) {
      throw invalidInput(`Deletes match keys only; '${name}' is not a key of '${info.schema.table}'.`, 'invalid-delete');
    }
    const type = info.schema.attributes[name]!;
    const normalized = normalizeValue(type, value, name);
    if (normalized === null) throw invalidInput(`Key '${name}' cannot be null.`, 'invalid-delete');
    key[name] = encode(type, normalized);
  }
  for (const h of info.hash) if (!(h in key)) throw invalidInput(`The hash key '${h}' is missing.`, 'missing-key');
  const hashKey = Object.fromEntries(info.hash.map((h) => [h, key[h]]));
  return { hashKey, key, wholePartition: info.range.every((r) => !(r in key)) };
}
