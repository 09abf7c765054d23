function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** The value with each blob replaced by `fn(blob)`, everything else as is (copies only the containers on the way). */
function mapBlobs(value: unknown, fn: (blob: Buffer) => unknown): unknown {
  if (value instanceof Uint8Array) return fn(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
  if (Array.isArray(value)) return value.map((v) => mapBlobs(v, fn));
  if (value !== null && typeof value === 'object' && isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const key in value as Record<string, unknown>) out[key] = mapBlobs((value as Record<string, unknown>)[key], fn);
    return out;
  }
  return value;
}

/** Blobs as base64 strings. */
const blobsToBase64 = (value: unknown) => mapBlobs(value, (blob) => blob.toString('base64'));

/**
 * JSON with blobs as base64: in-process they are bytes, over HTTP they travel as strings.
 * (A JSON.stringify replacer cannot do this cheaply: Buffer.toJSON runs first and makes an
 * array of every byte.)
 */
export function toJson(value: unknown): string {
  return JSON.stringify(blobsToBase64(value));
}

/** Blobs at least this big are spliced into the JSON as bytes rather than passed through JSON.stringify. */
const SPLICE_BYTES = 4096;
/** Stands for the blob at an index while the rest is stringified (NUL never appears unescaped in JSON). */
const MARK = '\u0000blob\u0000';
const MARK_IN_JSON = JSON.stringify(MARK).slice(1, -1);

/**
 * JSON bytes with blobs as base64, as toJson makes them, but large blobs are base64-encoded straight
 * into the output: JSON.stringify would scan each of their characters for escapes and the result
 * would be encoded to UTF-8 once more, though base64 needs neither.
 */
export function toJsonBytes(value: unknown): Buffer {
  const blobs: Buffer[] = [];
  const marked = mapBlobs(value, (blob) => {
    if (blob.length < SPLICE_BYTES) return blob.toString('base64');
    blobs.push(blob);
    return `${MARK}${blobs.length - 1}${MARK}`;
  });
  const json = JSON.stringify(marked);
  if (blobs.length === 0) return Buffer.from(json, 'utf8');
  // The text alternates: JSON, blob index, JSON, ... Each blob makes exactly two marks; any more
  // come from a string of the value itself that happens to hold one: then the plain way.
  const pieces = json.split(MARK_IN_JSON);
  if (pieces.length !== 2 * blobs.length + 1) return Buffer.from(toJson(value), 'utf8');
  const parts: Buffer[] = [];
  for (let i = 0; i < pieces.length; i++) {
    if (i % 2 === 0) parts.push(Buffer.from(pieces[i]!, 'utf8'));
    else parts.push(Buffer.from(blobs[Number(pieces[i])]!.toString('base64'), 'latin1'));
  }
  return Buffer.concat(parts);
}

/** Turns a handler's body into bytes and a default content type. */
export function bodyToBytes(body: unknown): { bytes: Buffer; contentType: string | undefined } {
  if (body === undefined || body === null) return { bytes: Buffer.alloc(0), contentType: undefined };
  if (Buffer.isBuffer(body)) return { bytes: body, contentType: 'application/octet-stream' };
  if (body instanceof Uint8Array) return { bytes: Buffer.from(body.buffer, body.byteOffset, body.byteLength), contentType: 'application/octet-stream' };
  if (typeof body === 'string') return { bytes: Buffer.from(body, 'utf8'), contentType: 'text/plain; charset=utf-8' };
  return { bytes: frozenJsonBytes(body as object), contentType: 'application/json' };
}

/**
 * The JSON of a value that cannot change (frozen all the way down, as a read cache hands out its
 * answers) is made once and kept while the value lives: a hot row answered again costs no
 * serialising (for a 50 KB blob, base64 and copying were about 27 µs an answer).
 */
const jsonOfFrozen = new WeakMap<object, Buffer>();
export function frozenJsonBytes(value: object): Buffer {
  if (!Object.isFrozen(value)) return toJsonBytes(value);
  let bytes = jsonOfFrozen.get(value);
  if (!bytes) jsonOfFrozen.set(value, (bytes = toJsonBytes(value)));
  return bytes;
}
