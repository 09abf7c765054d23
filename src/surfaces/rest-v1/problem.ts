import type { HttpError } from '../../util/errors.js';

const ERRORS = 'https://mediawiki.org/wiki/HyperSwitch/errors/';
/** RESTBase's error types by status; clients compare `type` with these URIs (e.g. not_found). */
const TYPES: Record<number, string> = {
  400: 'bad_request', 401: 'unauthorized', 403: 'access_denied', 404: 'not_found', 405: 'method_not_allowed', 406: 'not_acceptable',
  409: 'conflict', 412: 'precondition_failed', 413: 'request_too_large', 415: 'unsupported_media_type', 422: 'unprocessable_entity',
  428: 'precondition_required', 429: 'too_many_requests', 501: 'not_implemented', 502: 'bad_gateway', 503: 'service_unavailable', 504: 'gateway_timeout',
};

/** Types RESTBase's own modules named beyond the status's (its stash rate limit's). */
const OWN_TYPES = new Set(['request_rate_exceeded']);

/** An error in RESTBase's shape: `{type, title, method, detail, uri}`, plus our own details. */
export function restbaseProblem(error: HttpError, method: string, uri: string): Record<string, unknown> {
  const { type: _ours, status: _status, instance: _instance, ...rest } = error.toProblem();
  const kind = error.problemType.replace(/^urn:problem:/, '');
  const type = OWN_TYPES.has(kind) ? kind : (TYPES[error.status] ?? 'server_error');
  return { ...rest, type: `${ERRORS}${type}`, title: error.title, method: method.toLowerCase(), detail: error.detail, uri };
}
