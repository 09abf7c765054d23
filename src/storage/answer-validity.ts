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

/** Kept beside the answers (and their rows) rather than in them: answers are frozen and serialised as they are. */
const validities = new WeakMap<object, AnswerValidity>();

/** Records that `answer` and each of its rows hold while `validity` does. */
export function markValid(answer: { items: readonly object[] }, validity: AnswerValidity): void {
  validities.set(answer, validity);
  for (const row of answer.items) validities.set(row, validity);
}

/** Records that `made` (something made from `answer` alone) holds while `answer` does. */
export function madeFrom(made: object, answer: object): void {
  const validity = validities.get(answer);
  if (validity) validities.set(made, validity);
}

/** The validity of an answer, or of one of its rows, if the engine knows it. */
export function validityOf(value: object | undefined): AnswerValidity | undefined {
  return value === undefined ? undefined : validities.get(value);
}
