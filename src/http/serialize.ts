/** JSON with blobs as base64: in-process they are bytes, over HTTP they travel as strings. */
export function toJson(value: unknown): string {
  return JSON.stringify(value, function (this: Record<string, unknown>, key, v) {
    const original = this[key];
    if (original instanceof Uint8Array) return Buffer.from(original.buffer, original.byteOffset, original.byteLength).toString('base64');
    return v;
  });
}

/** Turns a handler's body into bytes and a default content type. */
export function bodyToBytes(body: unknown): { bytes: Buffer; contentType: string | undefined } {
  if (body === undefined || body === null) return { bytes: Buffer.alloc(0), contentType: undefined };
  if (Buffer.isBuffer(body)) return { bytes: body, contentType: 'application/octet-stream' };
  if (body instanceof Uint8Array) return { bytes: Buffer.from(body.buffer, body.byteOffset, body.byteLength), contentType: 'application/octet-stream' };
  if (typeof body === 'string') return { bytes: Buffer.from(body, 'utf8'), contentType: 'text/plain; charset=utf-8' };
  return { bytes: Buffer.from(toJson(body), 'utf8'), contentType: 'application/json' };
}
