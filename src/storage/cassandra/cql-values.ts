import cassandra from 'cassandra-driver';
import { canonicalDecimal } from '../decimal.js';
import { compareScalars, setElementType, toJsonInteger } from '../values.js';
import type { AttributeType, ScalarType } from '../types.js';

const { BigDecimal, TimeUuid, Uuid } = cassandra.types;

/**
 * Attribute types as Cassandra's native types, so ordering, equality in conditions and set
 * semantics are the engine's own. `float` is a CQL double: every backend keeps 64-bit floats,
 * and a value must read back as it was written whatever the engine.
 */
const CQL_TYPES: Record<ScalarType, string> = {
  blob: 'blob', string: 'text', int: 'int', long: 'bigint', varint: 'varint', decimal: 'decimal', float: 'double',
  double: 'double', boolean: 'boolean', timeuuid: 'timeuuid', uuid: 'uuid', timestamp: 'timestamp', json: 'text',
};

export function cqlType(type: AttributeType): string {
  const element = setElementType(type);
  return element ? `set<${CQL_TYPES[element]}>` : CQL_TYPES[type as ScalarType];
}

/** Two's-complement big-endian bytes of an integer (CQL's varint encoding). */
function varintBytes(n: bigint): Buffer {
  let hex = (n < 0n ? -n : n).toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  let bytes = Buffer.from(hex, 'hex');
  if (n < 0n) {
    const width = BigInt(bytes.length * 8);
    const complement = (1n << width) + n;
    hex = complement.toString(16).padStart(bytes.length * 2, '0');
    bytes = Buffer.from(hex, 'hex');
    if (!(bytes[0]! & 0x80)) bytes = Buffer.concat([Buffer.from([0xff]), bytes]);
  } else if (bytes[0]! & 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
  return bytes;
}

function fromVarintBytes(bytes: Buffer): bigint {
  if (bytes.length === 0) return 0n;
  const value = BigInt(`0x${bytes.toString('hex')}`);
  return bytes[0]! & 0x80 ? value - (1n << BigInt(bytes.length * 8)) : value;
}

/** A canonical decimal ("-12.5", "1000") as CQL's decimal: a 32-bit scale, then the unscaled digits. */
function toBigDecimal(text: string): InstanceType<typeof BigDecimal> {
  const [whole, fraction = ''] = text.split('.');
  const scale = Buffer.alloc(4);
  scale.writeInt32BE(fraction.length);
  return BigDecimal.fromBuffer(Buffer.concat([scale, varintBytes(BigInt(`${whole}${fraction}`))]));
}

function fromBigDecimal(value: InstanceType<typeof BigDecimal>): string {
  const bytes = BigDecimal.toBuffer(value);
  const scale = bytes.readInt32BE(0);
  const unscaled = fromVarintBytes(bytes.subarray(4));
  return canonicalDecimal(`${unscaled}e${-scale}`);
}

function scalarToCql(type: ScalarType, value: unknown): unknown {
  switch (type) {
    case 'long':
    case 'varint':
      return BigInt(value as number | string);
    case 'decimal':
      return toBigDecimal(value as string);
    case 'timestamp':
      return new Date(value as number);
    case 'timeuuid':
      return TimeUuid.fromString(value as string);
    case 'uuid':
      return Uuid.fromString(value as string);
    case 'json':
      return JSON.stringify(value);
    default:
      return value;
  }
}

/** A normalized value (see values.ts) as a driver parameter; null stays null. */
export function toCql(type: AttributeType, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  const element = setElementType(type);
  if (!element) return scalarToCql(type as ScalarType, value);
  return (value as unknown[]).map((v) => scalarToCql(element, v));
}

/** A driver value in the normalized form of values.ts (timestamps as milliseconds). */
function scalarFromCql(type: ScalarType, value: unknown): unknown {
  switch (type) {
    case 'long':
    case 'varint':
      return toJsonInteger(BigInt(value as bigint));
    case 'decimal':
      return fromBigDecimal(value as InstanceType<typeof BigDecimal>);
    case 'timestamp':
      return (value as Date).getTime();
    case 'timeuuid':
    case 'uuid':
      return String(value);
    case 'json':
      return JSON.parse(value as string);
    default:
      return value;
  }
}

/** A driver value as reads return it everywhere: JSON-friendly scalars, blobs as Buffers, sets sorted. */
export function fromCql(type: AttributeType, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  const element = setElementType(type);
  const output = (t: ScalarType, v: unknown) => (t === 'timestamp' ? new Date(v as number).toISOString() : v);
  if (!element) return output(type as ScalarType, scalarFromCql(type as ScalarType, value));
  // The engine sorts sets by its own comparators; reads everywhere sort them as values.ts does.
  const items = (value as unknown[]).map((v) => scalarFromCql(element, v)).sort((a, b) => compareScalars(element, a, b));
  return items.map((v) => output(element, v));
}

/**
 * `_exp` of a row that never expires. Written as a value, not as null: a null written in CQL is a
 * tombstone cell, which every read of the row then reads past and every compaction keeps for
 * `gc_grace_seconds`, one per row written. Rows written before read back null; both mean none.
 */
export const NO_EXPIRY = 0n;

/** A row's expiry (ms since the epoch) from its `_exp` cell, or null if it never expires. */
export function expiryOf(cell: unknown): number | null {
  if (cell === null || cell === undefined) return null;
  const ms = Number(cell);
  return ms === 0 ? null : ms;
}
