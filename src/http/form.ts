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

function parseUrlencoded(bytes: Buffer): Fields {
  if (moreThan(bytes, AMPERSAND, MAX_FIELDS)) throw tooManyFields();
  const fields: Fields = Object.create(null);
  let count = 0;
  for (const [name, value] of new URLSearchParams(bytes.toString('utf8'))) addField(fields, name, value, ++count);
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
