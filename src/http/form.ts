import { Busboy } from '@fastify/busboy';
import { HttpError, badRequest } from '../util/errors.js';
import type { FormType } from '../util/form-type.js';

/** More fields than any form of this API has; a client sending more is not filling in a form. */
const MAX_FIELDS = 100;

/** Fields by name (the last of a repeated name wins, as in PHP); no inherited names. */
type Fields = Record<string, string>;

function addField(fields: Fields, name: string, value: string, count: number): void {
  if (count > MAX_FIELDS) throw tooManyFields();
  fields[name] = value;
}

const tooManyFields = () => new HttpError(413, 'too-many-fields', `A form may have at most ${MAX_FIELDS} fields.`);

/** Whether `bytes` holds more than `max` copies of `needle`: counted before any parser allocates per field. */
function moreThan(bytes: Buffer, needle: Buffer | number, max: number): boolean {
  let count = 0;
  const step = typeof needle === 'number' ? 1 : needle.length;
  for (let at = bytes.indexOf(needle); at >= 0; at = bytes.indexOf(needle, at + step)) if (++count > max) return true;
  return false;
}

const AMPERSAND = 0x26;

const PLUS = 0x2b;
const PERCENT = 0x25;
const EQUALS = 0x3d;

/** A hex digit's value, or -1. */
function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  return -1;
}

/**
 * A name or value of an urlencoded form as the URL Standard decodes it: `+` a space, `%XX` a
 * byte (any other `%` as it is), then UTF-8 (invalid bytes U+FFFD). Decoded from the bytes into
 * one buffer: URLSearchParams took some 160 MB of heap for a 15 MB field, and one such request
 * ended a process with a 128 MB heap.
 */
function decodeComponent(bytes: Buffer): string {
  if (bytes.indexOf(PLUS) < 0 && bytes.indexOf(PERCENT) < 0) return bytes.toString('utf8');
  const out = Buffer.allocUnsafe(bytes.length);
  let o = 0;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (c === PLUS) out[o++] = 0x20;
    else if (c === PERCENT && i + 2 < bytes.length && hexValue(bytes[i + 1]!) >= 0 && hexValue(bytes[i + 2]!) >= 0) {
      out[o++] = hexValue(bytes[i + 1]!) * 16 + hexValue(bytes[i + 2]!);
      i += 2;
    } else out[o++] = c;
  }
  return out.toString('utf8', 0, o);
}

function parseUrlencoded(bytes: Buffer): Fields {
  if (moreThan(bytes, AMPERSAND, MAX_FIELDS)) throw tooManyFields();
  const fields: Fields = Object.create(null);
  let count = 0;
  for (let start = 0; start <= bytes.length; ) {
    let end = bytes.indexOf(AMPERSAND, start);
    if (end < 0) end = bytes.length;
    if (end > start) {
      const sequence = bytes.subarray(start, end);
      const equals = sequence.indexOf(EQUALS);
      const name = decodeComponent(equals < 0 ? sequence : sequence.subarray(0, equals));
      const value = equals < 0 ? '' : decodeComponent(sequence.subarray(equals + 1));
      addField(fields, name, value, ++count);
    }
    start = end + 1;
  }
  return fields;
}

const BOUNDARY = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))/i;

/**
 * Every part is a text field (editors send HTML and wikitext as parts, some with a filename).
 * The delimiters are counted first: a body of 100,000 tiny parts, or a part made of text that
 * repeats the boundary, is refused before the parser makes an object for each of them (that
 * took the process down: memory without bound, for a 6 MB body).
 */
function parseMultipart(bytes: Buffer, contentType: string): Promise<Fields> {
  const boundary = BOUNDARY.exec(contentType);
  if (!boundary) return Promise.reject(badRequest('A multipart/form-data body needs a boundary parameter of 1 to 70 characters.', 'invalid-form'));
  // Each part opens with a delimiter, and one more closes the body.
  if (moreThan(bytes, Buffer.from(`--${boundary[1] ?? boundary[2]}`), MAX_FIELDS + 1)) return Promise.reject(tooManyFields());
  return new Promise((resolve, reject) => {
    const fields: Fields = Object.create(null);
    let count = 0;
    let parser;
    try {
      parser = Busboy({
        headers: { 'content-type': contentType },
        isPartAFile: () => false,
        limits: { fieldSize: bytes.length, fields: MAX_FIELDS + 1, parts: MAX_FIELDS + 1 },
      });
    } catch (e) {
      return reject(badRequest(`The multipart body cannot be read: ${(e as Error).message}`, 'invalid-form'));
    }
    parser.on('field', (name: string, value: string) => {
      try {
        addField(fields, name, value, ++count);
      } catch (e) {
        reject(e);
      }
    });
    parser.on('fieldsLimit', () => reject(tooManyFields()));
    parser.on('error', (e: unknown) => reject(badRequest(`The multipart body is malformed: ${(e as Error).message}`, 'invalid-form')));
    parser.on('finish', () => resolve(fields));
    parser.end(bytes);
  });
}

/** A form body's fields as text (a schema with type coercion then reads numbers and booleans). */
export async function parseForm(bytes: Buffer, type: FormType, contentType: string): Promise<Fields> {
  return type === 'urlencoded' ? parseUrlencoded(bytes) : parseMultipart(bytes, contentType);
}
