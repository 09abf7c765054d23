import { createHash } from 'node:crypto';
import { invalidInput } from './errors.js';

/**
 * Paging tokens are keyset positions: the order-column values of the last row returned, so a
 * token stays valid while rows are written. A fingerprint ties a token to its query's shape.
 */
export function queryFingerprint(parts: unknown[]): string {
  return createHash('sha1').update(JSON.stringify(parts)).digest('base64url').slice(0, 10);
}

export function encodeToken(fingerprint: string, values: unknown[]): string {
  // Keys are never blobs, so plain JSON holds every key value.
  return Buffer.from(JSON.stringify({ f: fingerprint, k: values })).toString('base64url');
}

export function decodeToken(token: unknown, fingerprint: string, count: number): unknown[] {
  const malformed = () => invalidInput('The paging token (next) is malformed or belongs to another query.', 'invalid-paging-token');
  if (typeof token !== 'string' || token.length > 8192 || !/^[A-Za-z0-9_-]+$/.test(token)) throw malformed();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw malformed();
  }
  const { f, k } = (parsed ?? {}) as { f?: unknown; k?: unknown };
  if (f !== fingerprint || !Array.isArray(k) || k.length !== count) throw malformed();
  return k;
}
