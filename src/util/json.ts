import { HttpError, badRequest } from './errors.js';

/** Bounds on what one JSON body may build in memory. */
export interface JsonLimits {
  /** Deepest nesting of arrays and objects. */
  maxDepth: number;
  /** Most arrays, objects and array/object members in total. */
  maxValues: number;
}

const DEFAULT_JSON_LIMITS: JsonLimits = { maxDepth: 64, maxValues: 200_000 };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;
const COMMA = 0x2c;

/**
 * Checks nesting depth and value count with one pass over the bytes before JSON.parse builds
 * anything: a few MiB of `[[[[…` or of `[0,0,0,…` would otherwise fill the heap. Malformed JSON
 * passes this scan and is left for JSON.parse to reject.
 */
function checkShape(bytes: Uint8Array, limits: JsonLimits): void {
  let depth = 0;
  let values = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
      continue;
    }
    if (b === QUOTE) inString = true;
    else if (b === OPEN_ARRAY || b === OPEN_OBJECT) {
      if (++depth > limits.maxDepth) throw tooComplex(`nests deeper than ${limits.maxDepth} levels`);
      if (++values > limits.maxValues) throw tooComplex(`holds more than ${limits.maxValues} values`);
    } else if (b === CLOSE_ARRAY || b === CLOSE_OBJECT) depth--;
    else if (b === COMMA && ++values > limits.maxValues) throw tooComplex(`holds more than ${limits.maxValues} values`);
  }
}

function tooComplex(why: string): HttpError {
  return new HttpError(413, 'json-too-complex', `The JSON body ${why}.`);
}

/** Parses a JSON body within the limits: 413 when it is too deep or too large, 400 when malformed. */
export function parseJson(bytes: Buffer, limits: JsonLimits = DEFAULT_JSON_LIMITS): unknown {
  checkShape(bytes, limits);
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch (e) {
    throw badRequest(`Malformed JSON body: ${(e as Error).message}`, 'malformed-json');
  }
}
