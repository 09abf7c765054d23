import { invalidInput } from './errors.js';
import { sortableToTimeuuid, timeuuidToSortable } from '../util/timeuuid.js';
import { canonicalDecimal, decimalToSortable, normalizeDecimal, sortableToDecimal } from './decimal.js';
import type { AttributeType, ScalarType } from './types.js';

/** What an engine holds natively; anything else is stored in a sortable, engine-neutral form. */
export interface ValueCodec {
  readonly nativeBoolean: boolean;
  readonly nativeDecimal: boolean;
}

/** Timestamps an ISO 8601 string can say: years 0000 to 9999. */
const MIN_TIMESTAMP = Date.parse('0000-01-01T00:00:00.000Z');
const MAX_TIMESTAMP = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * Attribute values in three forms: what clients send (JSON or in-process bytes), what the engines
 * store (sortable and engine-neutral), and what reads return (JSON-friendly; blobs as Buffers).
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const INTEGER_TEXT = /^-?\d{1,20}$/;
const INT32_TEXT = /^-?\d{1,10}$/;

/**
 * A 64-bit integer (`long`, and `varint`, held to 64 bits on every engine) as JSON can carry it
 * exactly: a number while it is a safe integer, else its decimal string.
 */
export function toJsonInteger(value: bigint): number | string {
  return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString();
}

function normalizeInt64(type: string, value: unknown, name: string): number | string {
  let big: bigint | undefined;
  if (typeof value === 'number' && Number.isSafeInteger(value)) big = BigInt(value);
  else if (typeof value === 'bigint') big = value;
  else if (typeof value === 'string' && INTEGER_TEXT.test(value)) big = BigInt(value);
  if (big === undefined || big < INT64_MIN || big > INT64_MAX) {
    return invalid(name, `${type} (a 64-bit integer: a safe-integer number, or a decimal string beyond ±2^53)`, value);
  }
  return toJsonInteger(big);
}

export function setElementType(type: AttributeType): ScalarType | undefined {
  // Asked for every attribute of every row read: most are not sets.
  if (!type.startsWith('set<')) return undefined;
  const m = /^set<(\w+)>$/.exec(type);
  return m ? (m[1] as ScalarType) : undefined;
}

function invalid(name: string, type: string, value: unknown): never {
  const shown = typeof value === 'string' ? JSON.stringify(value.slice(0, 80)) : typeof value;
  throw invalidInput(`Attribute '${name}' must be of type ${type}; got ${shown}.`, 'invalid-attribute-value');
}

function normalizeScalar(type: ScalarType, value: unknown, name: string): unknown {
  switch (type) {
    case 'blob':
      if (Buffer.isBuffer(value)) return value;
      if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
      if (typeof value === 'string' && BASE64.test(value)) return Buffer.from(value, 'base64');
      return invalid(name, 'blob (bytes, or base64 in JSON)', value);
    case 'string':
      // NUL is rejected because PostgreSQL text cannot hold it: both backends must accept the same values.
      return typeof value === 'string' && !value.includes('\u0000') ? value : invalid(name, 'string (without NUL)', value);
    case 'int': {
      // A decimal string is taken too, as RESTBase's Cassandra driver took it ({int: '1'}).
      const n = typeof value === 'string' && INT32_TEXT.test(value) ? Number(value) : value;
      return Number.isInteger(n) && (n as number) >= INT32_MIN && (n as number) <= INT32_MAX ? n : invalid(name, 'int (32-bit integer)', value);
    }
    case 'long':
    case 'varint':
      return normalizeInt64(type, value, name);
    case 'decimal':
      return normalizeDecimal(value, name);
    case 'float':
    case 'double':
      return typeof value === 'number' && Number.isFinite(value) ? value : invalid(name, type, value);
    case 'boolean':
      return typeof value === 'boolean' ? value : invalid(name, type, value);
    case 'timeuuid':
      return typeof value === 'string' && UUID.test(value) && value[14] === '1'
        ? value.toLowerCase()
        : invalid(name, 'timeuuid (a version 1 UUID)', value);
    case 'uuid':
      return typeof value === 'string' && UUID.test(value) ? value.toLowerCase() : invalid(name, type, value);
    case 'timestamp': {
      const ms = typeof value === 'number' ? value : typeof value === 'string' ? Date.parse(value) : NaN;
      return Number.isFinite(ms) && ms >= MIN_TIMESTAMP && ms <= MAX_TIMESTAMP
        ? Math.trunc(ms)
        : invalid(name, 'timestamp (ISO 8601 or milliseconds, years 0000 to 9999)', value);
    }
    case 'json':
      return value;
  }
}

/** Orders two normalized values of one scalar type as Cassandra sorts set elements: by value. */
export function compareScalars(type: ScalarType, a: unknown, b: unknown): number {
  switch (type) {
    case 'int':
    case 'float':
    case 'double':
    case 'timestamp':
      return (a as number) - (b as number);
    case 'long':
    case 'varint': {
      const x = BigInt(a as number | string);
      const y = BigInt(b as number | string);
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case 'boolean':
      return Number(a) - Number(b);
    case 'blob':
      return Buffer.compare(a as Buffer, b as Buffer);
    default: {
      const x = textSortKey(type, a);
      const y = textSortKey(type, b);
      return x < y ? -1 : x > y ? 1 : 0;
    }
  }
}

/** Text that sorts as the value does, for the types compared as text. */
function textSortKey(type: ScalarType, value: unknown): string {
  if (type === 'decimal') return decimalToSortable(value as string);
  if (type === 'timeuuid') return timeuuidToSortable(value as string);
  if (type === 'json') return JSON.stringify(value);
  return value as string;
}

/** Validates a client value; `null` stays `null` (an absent value). Sets come back sorted and without duplicates. */
export function normalizeValue(type: AttributeType, value: unknown, name: string): unknown {
  if (value === null || value === undefined) return null;
  const element = setElementType(type);
  if (!element) return normalizeScalar(type as ScalarType, value, name);
  if (!Array.isArray(value)) return invalid(name, type, value);
  const items = value.map((v) => normalizeScalar(element, v, name)).sort((a, b) => compareScalars(element, a, b));
  // As in Cassandra, an empty set is no set.
  if (items.length === 0) return null;
  return items.filter((v, i) => i === 0 || compareScalars(element, items[i - 1], v) !== 0);
}

function scalarToStorage(type: ScalarType, value: unknown, codec: ValueCodec): unknown {
  switch (type) {
    case 'timeuuid':
      return timeuuidToSortable(value as string);
    case 'boolean':
      return codec.nativeBoolean ? value : value ? 1 : 0;
    case 'decimal':
      return codec.nativeDecimal ? value : decimalToSortable(value as string);
    case 'long':
    case 'varint':
      return codec === IN_SET ? value : BigInt(value as number | string);
    case 'json':
      return JSON.stringify(value);
    default:
      return value;
  }
}

/** Set elements are kept as JSON in every engine. */
const IN_SET: ValueCodec = { nativeBoolean: true, nativeDecimal: true };

/** Turns a normalized value into what one engine takes as a parameter. */
export type ToEngine = (type: AttributeType, value: unknown) => unknown;

/** A normalized value as an engine parameter. */
export function toStorage(type: AttributeType, value: unknown, codec: ValueCodec): unknown {
  if (value === null || value === undefined) return null;
  const element = setElementType(type);
  if (!element) return scalarToStorage(type as ScalarType, value, codec);
  return JSON.stringify(
    (value as unknown[]).map((v) => (element === 'blob' ? (v as Buffer).toString('base64') : scalarToStorage(element, v, IN_SET))),
  );
}

function scalarFromStorage(type: ScalarType, value: unknown, codec: ValueCodec): unknown {
  switch (type) {
    case 'timeuuid':
      return sortableToTimeuuid(value as string);
    case 'boolean':
      return value === true || value === 1 || value === 1n || value === '1';
    case 'json':
      return JSON.parse(value as string);
    case 'timestamp':
      return new Date(Number(value)).toISOString();
    case 'int':
    case 'float':
    case 'double':
      return Number(value);
    case 'long':
    case 'varint':
      return codec === IN_SET ? value : toJsonInteger(BigInt(value as number | string | bigint));
    case 'decimal':
      return codec.nativeDecimal ? canonicalDecimal(String(value)) : sortableToDecimal(value as string);
    case 'blob':
      return Buffer.isBuffer(value) ? value : Buffer.from(value as Uint8Array);
    default:
      return value;
  }
}

/** An engine value back into what reads return. */
export function fromStorage(type: AttributeType, value: unknown, codec: ValueCodec): unknown {
  if (value === null || value === undefined) return null;
  const element = setElementType(type);
  if (!element) return scalarFromStorage(type as ScalarType, value, codec);
  return (JSON.parse(value as string) as unknown[]).map((v) =>
    element === 'blob' ? Buffer.from(v as string, 'base64') : scalarFromStorage(element, v, IN_SET),
  );
}
