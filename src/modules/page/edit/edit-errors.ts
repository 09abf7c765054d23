import { HttpError } from '../../../util/errors.js';
import type { ApiError } from '../../../upstream/action-api.js';

/**
 * The wiki's refusals of an edit, by its error code, as the HTTP answers clients act on: one row
 * per code MediaWiki's edit module (and the extensions a wiki commonly runs) can answer. A code not
 * listed is still a refusal of what the caller sent (an extension's check: a Lua module that does
 * not compile, a blacklisted link): 422 with the wiki's code and message. Only the codes of the
 * wiki failing (below) are a 502.
 */
export const STATUS_OF_CODE: Record<string, { status: number; kind: string }> = {
  // Who the caller is does not allow it.
  protectedpage: { status: 403, kind: 'page-protected' },
  cascadeprotected: { status: 403, kind: 'page-protected' },
  protectedtitle: { status: 403, kind: 'page-protected' },
  blocked: { status: 403, kind: 'user-blocked' },
  autoblocked: { status: 403, kind: 'user-blocked' },
  permissiondenied: { status: 403, kind: 'permission-denied' },
  noedit: { status: 403, kind: 'permission-denied' },
  'noedit-anon': { status: 403, kind: 'login-required' },
  cantcreate: { status: 403, kind: 'permission-denied' },
  'cantcreate-anon': { status: 403, kind: 'login-required' },
  writeapidenied: { status: 403, kind: 'permission-denied' },
  readapidenied: { status: 403, kind: 'permission-denied' },
  protectednamespace: { status: 403, kind: 'page-protected' },
  'protectednamespace-interface': { status: 403, kind: 'page-protected' },
  sitecssprotected: { status: 403, kind: 'page-protected' },
  sitejsprotected: { status: 403, kind: 'page-protected' },
  sitejsonprotected: { status: 403, kind: 'page-protected' },
  customcssprotected: { status: 403, kind: 'page-protected' },
  customjsprotected: { status: 403, kind: 'page-protected' },
  customjsonprotected: { status: 403, kind: 'page-protected' },
  mycustomcssprotected: { status: 403, kind: 'page-protected' },
  mycustomjsprotected: { status: 403, kind: 'page-protected' },
  mycustomjsonprotected: { status: 403, kind: 'page-protected' },
  'titleblacklist-forbidden': { status: 403, kind: 'page-protected' },
  'nocreate-loggedin': { status: 403, kind: 'permission-denied' },
  'globalblocking-blockedtext': { status: 403, kind: 'user-blocked' },
  assertbotfailed: { status: 403, kind: 'permission-denied' },
  notoken: { status: 403, kind: 'bad-token' },
  captcha: { status: 403, kind: 'captcha-required' },
  mustbeloggedin: { status: 403, kind: 'login-required' },
  notloggedin: { status: 403, kind: 'login-required' },
  // The caller sent credentials, but the wiki no longer knows the session: log in again.
  assertuserfailed: { status: 401, kind: 'session-expired' },
  assertnameduserfailed: { status: 401, kind: 'session-expired' },
  badtoken: { status: 403, kind: 'bad-token' },
  // The page changed under the edit.
  editconflict: { status: 409, kind: 'edit-conflict' },
  pagedeleted: { status: 409, kind: 'page-deleted' },
  articleexists: { status: 409, kind: 'page-exists' },
  missingtitle: { status: 404, kind: 'page-not-found' },
  undofailure: { status: 409, kind: 'edit-conflict' },
  // The request names what does not fit the page.
  nosuchrevid: { status: 400, kind: 'unknown-base-revision' },
  revwrongpage: { status: 400, kind: 'base-of-another-page' },
  invalidsection: { status: 400, kind: 'invalid-section' },
  nosuchsection: { status: 400, kind: 'invalid-section' },
  emptypage: { status: 400, kind: 'empty-page' },
  emptynewsection: { status: 400, kind: 'empty-page' },
  editnotsupported: { status: 400, kind: 'content-model-not-editable' },
  'bad-content-model': { status: 400, kind: 'content-model-not-editable' },
  noimageredirect: { status: 403, kind: 'permission-denied' },
  // The content is refused.
  spamdetected: { status: 422, kind: 'content-refused' },
  spamblacklist: { status: 422, kind: 'content-refused' },
  'abusefilter-disallowed': { status: 422, kind: 'content-refused' },
  'abusefilter-warning': { status: 422, kind: 'content-refused' },
  hookaborted: { status: 422, kind: 'content-refused' },
  'edit-hook-aborted': { status: 422, kind: 'content-refused' },
  'abusefilter-blocked': { status: 403, kind: 'user-blocked' },
  'abusefilter-warning-linkspam': { status: 422, kind: 'content-refused' },
  'titleblacklist-forbidden-edit': { status: 422, kind: 'content-refused' },
  contenttoobig: { status: 413, kind: 'content-too-big' },
  invalidtitle: { status: 400, kind: 'invalid-title' },
  // The wiki cannot take edits now.
  ratelimited: { status: 429, kind: 'rate-limited' },
  actionthrottled: { status: 429, kind: 'rate-limited' },
  actionthrottledtext: { status: 429, kind: 'rate-limited' },
  readonly: { status: 503, kind: 'wiki-read-only' },
  maxlag: { status: 503, kind: 'wiki-lagged' },
};

/** The Action API's codes for its own failure (an exception, the database), not for what was sent. */
export const isWikiFailure = (code: string) => code.startsWith('internal_api_error') || code === 'dberror' || code === 'unknownerror' || code.startsWith('apierror-unknownerror');

/** A refused edit as a problem carrying the wiki's own code and message. */
export function editRefused(e: ApiError, extensions: Record<string, unknown> = {}): HttpError {
  const known = STATUS_OF_CODE[e.code] ?? (isWikiFailure(e.code) ? { status: 502, kind: 'upstream-error' } : { status: 422, kind: 'content-refused' });
  const headers: Record<string, string> = known.status === 429 || known.status === 503 ? { 'retry-after': '5' } : {};
  return new HttpError(known.status, known.kind, `The wiki refused the edit: ${e.info}`, {
    headers,
    extensions: { wiki_code: e.code, wiki_message: e.info, ...extensions },
  });
}
