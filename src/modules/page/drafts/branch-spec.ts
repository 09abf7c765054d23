import { TID_PATTERN } from '../../../util/tid.js';
import type { StepRoute } from '../edit/save-steps.js';
import { formOrJson, problem } from '../edit/write-spec.js';

/** The step a merge's save transaction runs to mark its branch merged (branch-records.ts serves it). */
export const BRANCH_MERGED_STEP = { method: 'PUT', path: '/page_branches/{branch}/merged/{rev}/{tid}' } as const satisfies StepRoute;

/** OpenAPI fragments of the branch routes; they validate requests as well as document them. */
const tags = ['drafts and branches'];
const title = { name: 'title', in: 'path', required: true, schema: { type: 'string' }, description: 'Page title (normalized as the wiki does)' };
const TID = { type: 'string', pattern: TID_PATTERN.source } as const;
const branch = { name: 'branch', in: 'path', required: true, schema: TID, description: 'The branch id (a time-uuid)' };
const tid = { name: 'tid', in: 'path', required: true, schema: TID, description: 'A version of the branch' };
const format = { name: 'format', in: 'path', required: true, schema: { enum: ['wikitext', 'html'] } };
const htmlForm = [
  { name: 'data-mw', in: 'query', schema: { enum: ['inline'] }, description: 'HTML with data-mw inline (2.x form), when the version was edited with data-mw apart' },
  { name: 'accept', in: 'header', schema: { type: 'string' }, description: 'A 2.x profile asks for data-mw inline, as for data-mw=inline' },
];
const user = { name: 'user', in: 'path', required: true, schema: { type: 'string', minLength: 1, maxLength: 255 }, description: 'A wiki user name' };
const ifMatch = { name: 'if-match', in: 'header', schema: { type: 'string', maxLength: 200 }, description: 'The ETag of the version edited, "{tid}"' };
const csrfHeader = { name: 'x-csrf-token', in: 'header', schema: { type: 'string', maxLength: 200 }, description: "The caller's own CSRF token from the wiki; needed when the caller is known by a Cookie (or give csrf_token)" };
const paging = [
  { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100 }, description: 'Versions per page (at most 100)' },
  { name: 'next', in: 'query', schema: { type: 'string', maxLength: 8192 }, description: 'Paging token from the previous page' },
];
const common = {
  403: problem('A change asked with a Cookie and no valid CSRF token, or by a user the branch is shared with to read'),
  404: problem('No such branch, or not one the caller may see'),
};
/** What every change of a branch may also answer. */
const change = {
  ...common,
  403: problem('A change asked with a Cookie and no valid CSRF token, by a user the branch is shared with to read, by a caller without the wiki\'s edit right (permission-denied) or blocked from editing it (blocked)'),
  429: problem("Past the wiki's own edit rate limits for the caller (Retry-After says when to try again)"),
};
const metadata = { description: '{branch, page, owner, state, base_revid, latest_tid, created, updated, expires, merged_rev, shares}; ETag names the latest version' };

/** A version's content as a client sends it. */
export const branchBody = {
  type: 'object',
  properties: {
    wikitext: { type: 'string', description: 'The content as wikitext (or give html)' },
    html: { type: 'string', description: 'The edited HTML (or give wikitext)' },
    'data-mw': { type: ['object', 'string'], description: "The edited HTML's data-mw, if it is not inline" },
    tid: { ...TID, description: 'The stored render the HTML was edited from (selective serialisation)' },
    base_revid: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'The revision the branch starts from (default: the latest)' },
    comment: { type: 'string', maxLength: 2000, description: 'What the version changed; the edit summary when it is promoted' },
    csrf_token: { type: 'string', maxLength: 200 },
  },
  additionalProperties: false,
} as const;

/** The optional body of promote, rebase and abandon. */
export const actionBody = {
  type: 'object',
  properties: { comment: { type: 'string', maxLength: 2000, description: 'The edit summary (promote; default the version\'s comment)' }, csrf_token: { type: 'string', maxLength: 200 } },
  additionalProperties: false,
} as const;

export const shareBody = {
  type: 'object', required: ['access'],
  properties: { access: { enum: ['read', 'write'] }, csrf_token: { type: 'string', maxLength: 200 } },
  additionalProperties: false,
} as const;

export const branchSpecs = {
  create: {
    tags, summary: 'Start a branch (a draft) of the page from a revision (default the latest)',
    parameters: [title, csrfHeader], requestBody: formOrJson(branchBody),
    responses: { 201: { description: '{branch, tid, base_revid, others}: others are the open branches of the page the caller may join; Location is the branch, ETag its version' }, 400: problem('Neither or both of wikitext and html, or a bad base'), 413: problem('Larger than the wiki takes a page (content-too-big)'), ...change },
  },
  list: { tags, summary: "The page's open branches the caller may see (their own, and those shared with them)", parameters: [title], responses: { 200: { description: '{items}' } } },
  mine: {
    tags, summary: "The caller's own branches on every page, and those shared with them",
    parameters: [{ name: 'expiring', in: 'query', schema: { enum: ['week'] }, description: 'Only branches that expire within a week unless updated' }],
    responses: { 200: { description: '{items, shared}' }, 401: problem('Anonymous callers have no list: their branches are reached by id') },
  },
  get: { tags, summary: "A branch's metadata", parameters: [title, branch], responses: { 200: metadata, 301: { description: 'The page moved: the branch is under its new title' }, ...common } },
  update: {
    tags, summary: 'A new version of the branch, over the version named by If-Match (exactly one of concurrent updates of a version wins)',
    parameters: [title, branch, ifMatch, csrfHeader], requestBody: formOrJson(branchBody),
    responses: { 200: metadata, 400: problem('A malformed If-Match'), 409: problem('The branch is merged or abandoned'), 412: problem('Another version came first'), 413: problem('Larger than the wiki takes a page (content-too-big)'), 428: problem('No If-Match'), ...change },
  },
  abandon: { tags, summary: 'Abandon the branch (its content is kept until it expires)', parameters: [title, branch, csrfHeader], responses: { 200: metadata, 409: problem('The branch is merged'), ...change } },
  content: {
    tags, summary: "The branch's latest content", parameters: [title, branch, format, ...htmlForm],
    responses: { 200: { description: 'Wikitext, or HTML (as edited, or rendered by Parsoid from the wikitext); ETag names the version' }, ...common },
  },
  versionContent: { tags, summary: 'One version of the branch', parameters: [title, branch, format, tid, ...htmlForm], responses: { 200: { description: 'The content of that version (immutable)' }, ...common } },
  history: { tags, summary: "The branch's versions, newest first", parameters: [title, branch, ...paging], responses: { 200: { description: '{items, next?}' }, ...common } },
  promote: {
    tags, summary: 'Save the branch to the wiki as the caller (three-way merged with the revisions made since its base) and mark it merged, in one transaction',
    parameters: [title, branch, ifMatch, csrfHeader], requestBody: { required: false, content: { 'application/json': { schema: actionBody } } },
    responses: { 201: { description: '{title, rev, tid, branch}' }, 200: { description: 'The wiki had the text already: the branch is marked merged with that revision' }, 409: problem('Merge conflicts (conflicts lists the hunks; nothing saved), or an edit conflict'), 412: problem('If-Match names an older version'), ...change },
  },
  rebase: {
    tags, summary: 'Bring the branch up to the page\'s current revision (three-way merge): a new version',
    parameters: [title, branch, ifMatch, csrfHeader], requestBody: { required: false, content: { 'application/json': { schema: actionBody } } },
    responses: { 200: metadata, 409: problem('Merge conflicts: conflicts lists the hunks; nothing written'), 412: problem('Another version came first'), ...change },
  },
  share: {
    tags, summary: 'Share the branch with a user, to read or to change (the owner only)',
    parameters: [title, branch, user, csrfHeader], requestBody: formOrJson(shareBody), responses: { 200: metadata, ...change },
  },
  unshare: { tags, summary: 'Stop sharing the branch with a user', parameters: [title, branch, user, csrfHeader], responses: { 200: metadata, ...change } },
  merged: {
    tags: ['page saves'], summary: "A promote's step: the branch's version {tid} became revision {rev} (idempotent)",
    parameters: [branch, { name: 'rev', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } }, tid],
    responses: { 200: { description: 'Marked merged (or already)' }, 404: problem('No such branch') },
  },
};
