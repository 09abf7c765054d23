import type { IncomingMessage } from 'node:http';
import { HttpError } from '../errors.js';
import type { BodyKind } from '../router/types.js';
import { parseJson, type JsonLimits } from './json.js';

export function isJsonType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const mime = contentType.split(';', 1)[0]!.trim().toLowerCase();
  return mime === 'application/json' || mime.endsWith('+json');
}

function tooLarge(limit: number): HttpError {
  return new HttpError(413, 'body-too-large', `The request body exceeds the limit of ${limit} bytes.`);
}

/**
 * Collects the body up to `limit` bytes. Past the limit it stops keeping bytes but does not
 * destroy the request: the 413 must reach the client, and closing a socket with unread input
 * makes the kernel reset the connection before the client reads the answer.
 */
function collect(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(new HttpError(400, 'body-aborted', `The request body could not be read: ${err.message}`));
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

/**
 * Reads the body of a route that takes one: JSON (parsed within `jsonLimits`) or raw bytes.
 * Routes that take no body never read it; node discards it after the answer.
 */
export async function readBody(req: IncomingMessage, kind: BodyKind | undefined, limit: number, jsonLimits?: JsonLimits): Promise<unknown> {
  if (!kind) return undefined;
  const declared = req.headers['content-length'];
  if (declared === undefined && req.headers['transfer-encoding'] === undefined) return undefined;
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(limit);
  const bytes = await collect(req, limit);
  if (bytes.length === 0) return undefined;
  if (kind === 'raw') return bytes;
  if (!isJsonType(req.headers['content-type'])) {
    throw new HttpError(415, 'unsupported-media-type', 'The body must be application/json.');
  }
  return parseJson(bytes, jsonLimits);
}

/**
 * Reads and discards what is left of a request body, up to `maxBytes`; true once it is all read.
 * An answer sent before the body was read, on a connection that then closes, would be lost to a
 * reset: the kernel resets a socket closed with unread input.
 */
export function drainBody(req: IncomingMessage, maxBytes: number): Promise<boolean> {
  if (req.complete || req.readableEnded) return Promise.resolve(true);
  return new Promise((resolve) => {
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) finish(false);
    };
    const finish = (drained: boolean) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onError);
      resolve(drained);
    };
    const onEnd = () => finish(true);
    const onError = () => finish(req.complete);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onError);
    req.resume();
  });
}
