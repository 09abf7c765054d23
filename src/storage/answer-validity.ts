/**
 * How long, and while what holds, a query's answer stays what the same query would return now:
 * known for answers of engines that can tell cheaply whether anything was committed since (SQLite's
 * data version; see sql/read-cache.ts). Layers above hand it on with what they make of the answer,
 * so that an HTTP answer made from it can be sent again while it holds (http/answer-memo.ts).
 */
export interface AnswerValidity {
  /** Time (ms since the epoch) of the first expiry of a row of its table, or Infinity. */
  until: number;
  /** Whether nothing has been committed to the store since the answer was read. */
  valid: () => boolean;
}

/**
 * Kept on the answers and rows themselves, under a symbol (not enumerable: neither their JSON nor
 * a spread of them carries it), set before they are frozen. A WeakMap beside them cost more than
 * the rest of a cache-missing read's storage work: every row read through the cache an entry, the
 * table rehashed as it grew, and every collection walked it (bench/README.md, "2026-12-06").
 */
const VALIDITY = Symbol('answer validity');

const mark = (value: object, validity: AnswerValidity) => {
  if (Object.isExtensible(value)) Object.defineProperty(value, VALIDITY, { value: validity });
};

/** Records that `answer` and each of its rows hold while `validity` does (before they are frozen). */
export function markValid(answer: { items: readonly object[] }, validity: AnswerValidity): void {
  mark(answer, validity);
  for (const row of answer.items) mark(row, validity);
}

/** Records that `made` (something made from `answer` alone, not frozen yet) holds while `answer` does. */
export function madeFrom(made: object, answer: object): void {
  const validity = validityOf(answer);
  if (validity) mark(made, validity);
}

/** The validity of an answer, or of one of its rows, if the engine knows it. */
export function validityOf(value: object | undefined): AnswerValidity | undefined {
  return value === undefined ? undefined : (value as { [VALIDITY]?: AnswerValidity })[VALIDITY];
}
