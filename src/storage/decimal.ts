import { invalidInput } from './errors.js';

/**
 * Arbitrary-precision decimals, bounded so every engine can hold them: at most MAX_DIGITS
 * significant digits and a magnitude between 10^-MAX_EXPONENT and 10^MAX_EXPONENT.
 * A decimal is `sign × 0.digits × 10^exponent` with no leading or trailing zeros in `digits`.
 */
const MAX_DIGITS = 1000;
const MAX_EXPONENT = 1000;
const EXPONENT_WIDTH = 4;
const SYNTAX = /^([-+]?)(\d*)(?:\.(\d*))?(?:[eE]([-+]?\d{1,12}))?$/;

interface Decimal {
  sign: -1 | 0 | 1;
  digits: string;
  exponent: number;
}

function parse(text: string): Decimal | undefined {
  const m = SYNTAX.exec(text);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return undefined;
  const whole = m[2]!;
  const fraction = m[3] ?? '';
  const all = whole + fraction;
  const lead = all.search(/[1-9]/);
  if (lead === -1) return { sign: 0, digits: '', exponent: 0 };
  const digits = all.slice(lead).replace(/0+$/, '');
  return { sign: m[1] === '-' ? -1 : 1, digits, exponent: whole.length - lead + Number(m[4] ?? 0) };
}

function canonical({ sign, digits, exponent }: Decimal): string {
  if (sign === 0) return '0';
  let plain: string;
  if (exponent <= 0) plain = `0.${'0'.repeat(-exponent)}${digits}`;
  else if (exponent >= digits.length) plain = digits + '0'.repeat(exponent - digits.length);
  else plain = `${digits.slice(0, exponent)}.${digits.slice(exponent)}`;
  return sign < 0 ? `-${plain}` : plain;
}

/** A client's decimal (number or numeric string) in canonical plain notation; 400 when out of bounds. */
export function normalizeDecimal(value: unknown, name: string): string {
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : typeof value === 'string' ? value : undefined;
  const parsed = text === undefined || text.length > 4 * MAX_DIGITS ? undefined : parse(text);
  if (!parsed) throw invalidInput(`Attribute '${name}' must be of type decimal (a number or numeric string).`, 'invalid-attribute-value');
  if (parsed.digits.length > MAX_DIGITS || Math.abs(parsed.exponent) > MAX_EXPONENT) {
    throw invalidInput(
      `Attribute '${name}' is a decimal beyond the supported range (at most ${MAX_DIGITS} significant digits, magnitude 1e-${MAX_EXPONENT} to 1e${MAX_EXPONENT}).`,
      'invalid-attribute-value',
    );
  }
  return canonical(parsed);
}

/** A decimal as an engine returns it (e.g. PostgreSQL's `1.50`) in canonical form. */
export function canonicalDecimal(text: string): string {
  const parsed = parse(text);
  return parsed ? canonical(parsed) : text;
}

const complement = (digits: string) => digits.replace(/\d/g, (d) => String(9 - Number(d)));

/**
 * A canonical decimal as text that sorts bytewise in numeric order (for engines without a decimal
 * type): a sign class, the exponent biased to a fixed width, then the digits; negatives have both
 * complemented and a terminator above every digit, so a shorter negative sorts after a longer one.
 */
export function decimalToSortable(text: string): string {
  const d = parse(text)!;
  if (d.sign === 0) return '1';
  if (d.sign > 0) return `2${String(d.exponent + MAX_EXPONENT).padStart(EXPONENT_WIDTH, '0')}${d.digits}`;
  return `0${String(MAX_EXPONENT - d.exponent).padStart(EXPONENT_WIDTH, '0')}${complement(d.digits)}~`;
}

export function sortableToDecimal(sortable: string): string {
  if (sortable === '1') return '0';
  const negative = sortable[0] === '0';
  const biased = Number(sortable.slice(1, 1 + EXPONENT_WIDTH));
  const body = sortable.slice(1 + EXPONENT_WIDTH);
  const digits = negative ? complement(body.slice(0, -1)) : body;
  const exponent = negative ? MAX_EXPONENT - biased : biased - MAX_EXPONENT;
  return canonical({ sign: negative ? -1 : 1, digits, exponent });
}
