/** Version 1 time-uuids as text: their embedded time, and a form that sorts by it. Pure; no layer of its own. */

/** v1 time-uuids sort by their embedded time: move time_hi and time_mid in front of time_low. */
export function timeuuidToSortable(uuid: string): string {
  const u = uuid.toLowerCase();
  // The canonical 8-4-4-4-12 form, sliced where its fields are (every stored row's tid passes here).
  if (u.length === 36 && u[8] === '-' && u[13] === '-' && u[18] === '-' && u[23] === '-') {
    return u.slice(14, 18) + u.slice(9, 13) + u.slice(0, 8) + u.slice(19, 23) + u.slice(24);
  }
  const hex = u.replace(/-/g, '');
  return hex.slice(12, 16) + hex.slice(8, 12) + hex.slice(0, 8) + hex.slice(16);
}

export function sortableToTimeuuid(s: string): string {
  const low = s.slice(8, 16);
  const mid = s.slice(4, 8);
  const hi = s.slice(0, 4);
  // Joined, not concatenated: a concatenation is a tree of four string nodes over five slices,
  // and a tid kept in a cached row (its `_tid`, its page's `latest_tid`) kept all of them.
  return [low, mid, hi, s.slice(16, 20), s.slice(20, 32)].join('-');
}

/** 1582-10-15T00:00:00Z, the start of the Gregorian calendar: the earliest time a v1 time-uuid names. */
export const TIMEUUID_EPOCH_MS = -12_219_292_800_000;
/** The latest time a v1 time-uuid names (60 bits of 100 ns ticks): in the year 5236. */
export const TIMEUUID_END_MS = Number((2n ** 60n - 1n - 122192928000000000n) / 10000n);

/** 100 ns ticks since the epoch of a v1 time-uuid. */
function unixTicks(uuid: string): bigint {
  const hex = uuid.replace(/-/g, '');
  return BigInt(`0x${hex.slice(13, 16)}${hex.slice(8, 12)}${hex.slice(0, 8)}`) - 122192928000000000n;
}

/** Milliseconds since the epoch of a v1 time-uuid. */
export function timeuuidMillis(uuid: string): number {
  return Number(unixTicks(uuid) / 10000n);
}

/** Microseconds since the epoch of a v1 time-uuid (a safe integer until the year 2255). */
export function timeuuidMicros(uuid: string): number {
  return Number(unixTicks(uuid) / 10n);
}
