/**
 * What table storage reports, in its own terms: callers (the table module) decide what each kind
 * means to their clients. `code` names the problem more precisely (e.g. `unknown-table`).
 */
export type StorageErrorKind = 'invalid' | 'not-found' | 'condition-failed' | 'unavailable';

export class StorageError extends Error {
  constructor(
    readonly kind: StorageErrorKind,
    readonly code: string,
    readonly detail: string,
    /** For `unavailable`: seconds after which asking again is worth it. */
    readonly retryAfter = 1,
  ) {
    super(detail);
    this.name = 'StorageError';
  }
}

/** A schema, query, write or value the model does not accept. */
export const invalidInput = (detail: string, code = 'invalid') => new StorageError('invalid', code, detail);
/** No such table. */
export const missing = (detail: string, code = 'not-found') => new StorageError('not-found', code, detail);
/** A conditional write whose condition did not hold; nothing was written. */
export const conditionFailed = (detail: string, code = 'condition-failed') => new StorageError('condition-failed', code, detail);
/** The engine could not answer now (too few replicas, a timeout); a write's outcome may be unknown. */
export const unavailable = (detail: string, code = 'storage-unavailable', retryAfter = 1) => new StorageError('unavailable', code, detail, retryAfter);
