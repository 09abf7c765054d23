import type { IncomingMessage } from 'node:http';
import { HttpError, badRequest } from '../errors.js';

export function isJsonType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const mime = contentType.split(';', 1)[0]!.trim().toLowerCase();
  return mime === 'application/json' || mime.endsWith('+json');
}

function tooLarge(limit: number): HttpError {
  return new HttpError(413, 'body-too-large', `The request body exceeds the limit of ${limit} bytes.`);
}

/** Reads the body up to `limit` bytes; JSON content types are parsed, everything else stays bytes. */
export async function readBody(req: IncomingMessage, limit: number, raw = false): Promise<unknown> {
  const declared = req.headers['content-length'];
  if (declared === undefined && req.headers['transfer-encoding'] === undefined) return undefined;
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(limit);

  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  if (size === 0) return undefined;
  const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
  if (raw || !isJsonType(req.headers['content-type'])) return bytes;
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch (e) {
    throw badRequest(`Malformed JSON body: ${(e as Error).message}`, 'malformed-json');
  }
}
