import { randomBytes } from 'node:crypto';
import { v1 as uuidv1 } from 'uuid';
import { badRequest } from './errors.js';
import { TIMEUUID_END_MS, TIMEUUID_EPOCH_MS, timeuuidMillis, timeuuidToSortable } from './timeuuid.js';

/**
 * Render and revision time-uuids (v1): ordered by their embedded time. Also the two ways a time
 * is written in URLs: ISO 8601 and the compact 20140101T20:23:22.100Z.
 */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
const COMPACT = /^(\d{4})(\d{2})(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?Z$/;
/** Clocks of the writers may run a little ahead of ours. */
const FUTURE_SKEW_MS = 60_000;

/** This process's v1 clock: its node and clock sequence (random, as RFC 9562 allows) and its count within the millisecond. */
const clock = { msecs: -Infinity, nsecs: 0, node: undefined as Uint8Array | undefined, clockseq: 0 };
/** Given where every field is set, so the library draws none (it asks 16 random bytes of WebCrypto per uuid otherwise: 2-3 µs). */
const NO_RANDOM = new Uint8Array(16);

/**
 * A new tid, after every other of this process (counted within a millisecond, as the uuid
 * library's own v1 does; a new random node when the count runs out or the clock goes back).
 */
export function newTid(): string {
  const now = Date.now();
  if (now === clock.msecs) {
    if (++clock.nsecs >= 10_000) {
      clock.node = undefined;
      clock.nsecs = 0;
    }
  } else {
    if (now < clock.msecs) clock.node = undefined;
    clock.nsecs = 0;
  }
  if (!clock.node) {
    const r = randomBytes(8);
    r[0]! |= 0x01;
    clock.node = r.subarray(0, 6);
    clock.clockseq = r.readUInt16BE(6) & 0x3fff;
  }
  clock.msecs = now;
  return uuidv1({ msecs: now, nsecs: clock.nsecs, clockseq: clock.clockseq, node: clock.node, random: NO_RANDOM });
}

/** A new tid, timed after `previous` even if this process's clock is behind the one that made it. */
export function tidAfter(previous: string): string {
  const tid = newTid();
  const floor = tidTime(previous);
  return tidTime(tid) > floor ? tid : uuidv1({ msecs: floor + 1, nsecs: 0, clockseq: clock.clockseq, node: clock.node, random: NO_RANDOM });
}

/**
 * A time-uuid nobody can guess from others: a fresh random node (multicast bit set, as RFC 9562
 * has random nodes marked), clock sequence and sub-millisecond part, about 75 random bits. A
 * plain v1 shares its node and clock sequence across a process, and counts within a millisecond:
 * whoever holds one can list its neighbours. Still ordered by time, as a timeuuid column needs.
 */
export function unguessableTid(): string {
  const r = randomBytes(10);
  r[0]! |= 0x01;
  return uuidv1({ node: r.subarray(0, 6), clockseq: r.readUInt16BE(6) & 0x3fff, msecs: Date.now(), nsecs: r.readUInt16BE(8) % 10_000 });
}

/** A version-1 time-uuid; `.source` is the pattern the OpenAPI schemas use. */
export const TID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-1[0-9a-fA-F]{3}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export function isTid(value: string): boolean {
  return TID_PATTERN.test(value);
}

export function tidTime(tid: string): number {
  return timeuuidMillis(tid);
}

/** A chosen tid ahead of every clock would stay "latest" for ever: refuse it beyond the skew. */
export function checkNotFuture(tid: string): void {
  const ms = tidTime(tid);
  if (ms > Date.now() + FUTURE_SKEW_MS) throw badRequest(`The tid ${tid} is from ${new Date(ms).toISOString()}, in the future.`, 'tid-in-future');
}

/** Orders two time-uuids by time, then by the rest. */
export function compareTids(a: string, b: string): number {
  const x = timeuuidToSortable(a);
  const y = timeuuidToSortable(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * The greatest time-uuid of millisecond `ms`: a `le` bound that includes every tid of that ms. A
 * time before the first a time-uuid names is the first (nothing was stored before it).
 */
export function maxTidAt(ms: number): string {
  if (!(ms >= TIMEUUID_EPOCH_MS)) ms = TIMEUUID_EPOCH_MS;
  if (ms > TIMEUUID_END_MS) ms = TIMEUUID_END_MS;
  const ticks = (BigInt(ms) * 10000n + 9999n + 122192928000000000n).toString(16).padStart(15, '0');
  return `${ticks.slice(7)}-${ticks.slice(3, 7)}-1${ticks.slice(0, 3)}-ffff-ffffffffffff`;
}

/** Parses a time in either URL form; unparseable or future times are 400s. */
/** Whether an ISO time's date (its first ten characters) is a day of the calendar: Date.parse takes 2020-02-30 for March 1st. */
function isCalendarDay(iso: string): boolean {
  const [y, m, d] = [Number(iso.slice(0, 4)), Number(iso.slice(5, 7)), Number(iso.slice(8, 10))];
  // setUTCFullYear, unlike Date.UTC, takes years below 100 as they are.
  const day = new Date(0);
  day.setUTCFullYear(y, m - 1, d);
  return day.getUTCFullYear() === y && day.getUTCMonth() === m - 1 && day.getUTCDate() === d;
}

export function parseTime(text: string): number {
  const compact = COMPACT.exec(text);
  const iso = compact ? `${compact[1]}-${compact[2]}-${compact[3]}T${compact[4]}:${compact[5]}:${compact[6]}${compact[7] ?? ''}Z` : text;
  const ms = ISO.test(iso) && isCalendarDay(iso) ? Date.parse(iso) : NaN;
  if (!Number.isFinite(ms)) {
    throw badRequest(`'${text.slice(0, 64)}' is not a time: use ISO 8601 (2014-01-01T20:23:22.100Z) or 20140101T20:23:22.100Z.`, 'invalid-time');
  }
  if (ms > Date.now() + FUTURE_SKEW_MS) throw badRequest(`The time ${new Date(ms).toISOString()} is in the future.`, 'time-in-future');
  return ms;
}
