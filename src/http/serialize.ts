function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Blobs as base64 strings, everything else as is (copies only the containers on the way). */
function blobsToBase64(value: unknown): unknown {
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
  if (Array.isArray(value)) return value.map(blobsToBase64);
  if (value !== null && typeof value === 'object' && isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const key in value as Record<string, unknown>) out[key] = blobsToBase64((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}

/**
 * JSON with blobs as base64: in-process they are bytes, over HTTP they travel as strings.
 * (A JSON.stringify replacer cannot do this cheaply: Buffer.toJSON runs first and makes an
 * array of every byte.)
 */
export function toJson(value: unknown): string {
  return JSON.stringify(blobsToBase64(value));
}

/** Turns a handler's body into bytes and a default content type. */
export function bodyToBytes(body: unknown): { bytes: Buffer; contentType: string | undefined } {
  if (body === undefined || body === null) return { bytes: Buffer.alloc(0), contentType: undefined };
  if (Buffer.isBuffer(body)) return { bytes: body, contentType: 'application/octet-stream' };
  if (body instanceof Uint8Array) return { bytes: Buffer.from(body.buffer, body.byteOffset, body.byteLength), contentType: 'application/octet-stream' };
  if (typeof body === 'string') return { bytes: Buffer.from(body, 'utf8'), contentType: 'text/plain; charset=utf-8' };
  return { bytes: Buffer.from(toJson(body), 'utf8'), contentType: 'application/json' };
}
