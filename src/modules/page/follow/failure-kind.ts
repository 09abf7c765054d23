import { HttpError } from '../../../util/errors.js';
import { StorageError } from '../../../storage/errors.js';
import { ApiError } from '../../../upstream/action-api.js';

/** What kind of failure stopped a batch: the wiki not answering, the wiki refusing, storage, or else. */
export function failureKind(err: unknown): string {
  const type = err instanceof HttpError ? err.problemType : '';
  if (type === 'urn:problem:upstream-error') return 'wiki-error';
  if (type.startsWith('urn:problem:upstream')) return 'wiki-unavailable';
  if (err instanceof ApiError) return 'wiki-error';
  if (err instanceof StorageError || type.startsWith('urn:problem:storage')) return 'storage';
  return 'other';
}
