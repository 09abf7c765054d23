import { badRequest } from '../errors.js';
import type { AttributeType, ScalarType } from './types.js';

/**
 * Attribute values in three forms: what clients send (JSON or in-process bytes), what the engines
 * store (sortable and engine-neutral), and what reads return (JSON-friendly; blobs as Buffers).
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

export function setElementType(type: AttributeType): ScalarType | undefined {
  const m = /^set<(\w+)>$/.exec(type);
  return m ? (m[1] as ScalarType) : undefined;
}

function invalid(name: string, type: string, value: unknown): never {
  const shown = typeof value === 'string' ? JSON.stringify(value.slice(0, 80)) : typeof value;
  throw badRequest(`Attribute '${name}' must be of type ${type}; got ${shown}.`, 'invalid-attribute-value');
}

/** v1 time-uuids sort by their embedded time: move time_hi and time_mid in front of time_low. */
export function timeuuidToSortable(uuid: string): string {
  const hex = uuid.toLowerCase().replace(/-/g, '');
  return hex.slice(12, 16) + hex.slice(8, 12) + hex.slice(0, 8) + hex.slice(16);
}

export function sortableToTimeuuid(s: string): string {
  const low = s.slice(8, 16);
  const mid = s.slice(4, 8);
  const hi = s.slice(0, 4);
  return `${low}-${mid}-${hi}-${s.slice(16, 20)}-${s.slice(20, 32)}`;
}

/** Milliseconds since the epoch of a v1 time-uuid. */
export function timeuuidMillis(uuid: string): number {
  const hex = uuid.replace(/-/g, '');
  const ticks = BigInt(`0x${hex.slice(13, 16)}${hex.slice(8, 12)}${hex.slice(0, 8)}`);
  return Number((ticks - 122192928000000000n) / 10000n);
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
    case 'int':
      return Number.isInteger(value) && (value as number) >= INT32_MIN && (value as number) <= INT32_MAX
        ? value
        : invalid(name, 'int (32-bit integer)', value);
    case 'varint':
      return Number.isSafeInteger(value) ? value : invalid(name, 'varint (integer within ±2^53)', value);
    case 'decimal':
      if (typeof value === 'number' && Number.isFinite(value)) return String(value);
      if (typeof value === 'string' && /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(value)) return value;
      return invalid(name, 'decimal (number or numeric string)', value);
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
      return Number.isFinite(ms) ? Math.trunc(ms) : invalid(name, 'timestamp (ISO 8601 or milliseconds)', value);
    }
    case 'json':
      return value;
  }
}

/** Validates a client value; `null` stays `null` (an absent value). */
export function normalizeValue(type: AttributeType, value: unknown, name: string): unknown {
  if (value === null || value === undefined) return null;
  const element = setElementType(type);
  if (!element) return normalizeScalar(type as ScalarType, value, name);
  if (!Array.isArray(value)) return invalid(name, type, value);
  const items = value.map((v) => normalizeScalar(element, v, name));
  const byKey = new Map(items.map((v) => [JSON.stringify(scalarToStorage(element, v, false)), v]));
  return [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v);
}

function scalarToStorage(type: ScalarType, value: unknown, nativeBoolean: boolean): unknown {
  switch (type) {
    case 'timeuuid':
      return timeuuidToSortable(value as string);
    case 'boolean':
      return nativeBoolean ? value : value ? 1 : 0;
    case 'json':
      return JSON.stringify(value);
    case 'blob':
      return value;
    default:
      return value;
  }
}

/** A normalized value as an engine parameter. */
export function toStorage(type: AttributeType, value: unknown, nativeBoolean: boolean): unknown {
  if (value === null || value === undefined) return null;
  const element = setElementType(type);
  if (!element) return scalarToStorage(type as ScalarType, value, nativeBoolean);
  return JSON.stringify(
    (value as unknown[]).map((v) => (element === 'blob' ? (v as Buffer).toString('base64') : scalarToStorage(element, v, true))),
  );
}

function scalarFromStorage(type: ScalarType, value: unknown): unknown {
  switch (type) {
    case 'timeuuid':
      return sortableToTimeuuid(value as string);
    case 'boolean':
      return value === true || value === 1 || value === '1';
    case 'json':
      return JSON.parse(value as string);
    case 'timestamp':
      return new Date(Number(value)).toISOString();
    case 'int':
    case 'varint':
    case 'float':
    case 'double':
      return Number(value);
    case 'decimal':
      return String(value);
    case 'blob':
      return Buffer.isBuffer(value) ? value : Buffer.from(value as Uint8Array);
    default:
      return value;
  }
}

/** An engine value back into what reads return. */
export function fromStorage(type: AttributeType, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  const element = setElementType(type);
  if (!element) return scalarFromStorage(type as ScalarType, value);
  return (JSON.parse(value as string) as unknown[]).map((v) =>
    element === 'blob' ? Buffer.from(v as string, 'base64') : scalarFromStorage(element, v),
  );
}
