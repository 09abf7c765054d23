import type { IncomingMessage } from 'node:http';
import { HttpError } from '../util/errors.js';
import { isFormKind, type BodyKind } from '../router/types.js';
import { formTypeOf } from '../util/form-type.js';
import { parseForm } from './form.js';
import { parseJson, type JsonLimits } from '../util/json.js';

function isJsonType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const mime = contentType.split(';', 1)[0]!.trim().toLowerCase();
  return mime === 'application/json' || mime.endsWith('+json');
}

function tooLarge(limit: number): HttpError {
  return new HttpError(413, 'body-too-large', `The request body exceeds the limit of ${limit} bytes.`);
}

/**
 * Reads the body as it arrives, keeping the bytes if `keep`, until it ends (complete) or passes
 * `maxBytes` (over). Past the limit it stops listening but never destroys the request: closing a
 * socket with unread input makes the kernel reset the connection before the client reads the
 * answer (a 413, say), so what is left is read by `drainBody` before answering.
 */
function consume(req: IncomingMessage, maxBytes: number, keep: boolean): Promise<{ outcome: 'complete' | 'over' | 'aborted'; bytes: Buffer }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (outcome: 'complete' | 'over' | 'aborted') => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('close', onAbort);
      resolve({ outcome, bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) });
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) return finish('over');
      if (keep) chunks.push(chunk);
    };
    const onEnd = () => finish('complete');
    const onAbort = () => finish(req.complete ? 'complete' : 'aborted');
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('close', onAbort);
    req.resume();
  });
}

/**
 * The bytes of the body of a route that takes one, undefined if none came. Routes that take no
 * body never read it; node discards it after the answer.
 */
export async function readBodyBytes(req: IncomingMessage, kind: BodyKind | undefined, limit: number): Promise<Buffer | undefined> {
  if (!kind) return undefined;
  const declared = req.headers['content-length'];
  if (declared === undefined && req.headers['transfer-encoding'] === undefined) return undefined;
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(limit);
  const { outcome, bytes } = await consume(req, limit, true);
  if (outcome === 'over') throw tooLarge(limit);
  if (outcome === 'aborted') throw new HttpError(400, 'body-aborted', 'The request body ended before it was complete.');
  return bytes.length === 0 ? undefined : bytes;
}

/**
 * A body as its route takes it: JSON (parsed within `jsonLimits`), a form's fields (`form`
 * routes), or raw bytes.
 */
export async function parseBody(bytes: Buffer | undefined, kind: BodyKind | undefined, contentType: string | undefined, jsonLimits?: JsonLimits): Promise<unknown> {
  if (!kind || bytes === undefined) return undefined;
  if (kind === 'raw') return bytes;
  const form = isFormKind(kind) ? formTypeOf(contentType) : undefined;
  if (form) return parseForm(bytes, form, contentType!);
  if (!isJsonType(contentType)) {
    if (isFormKind(kind)) {
      throw new HttpError(415, 'unsupported-media-type', 'The body must be application/json, application/x-www-form-urlencoded or multipart/form-data.');
    }
    throw new HttpError(415, 'unsupported-media-type', 'The body must be application/json.');
  }
  return parseJson(bytes, jsonLimits);
}

/** Reads and discards what is left of a request body, up to `maxBytes`; true once it is all read. */
export async function drainBody(req: IncomingMessage, maxBytes: number): Promise<boolean> {
  if (req.complete || req.readableEnded) return true;
  return (await consume(req, maxBytes, false)).outcome === 'complete';
}
