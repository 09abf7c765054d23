import { TID_PATTERN } from '../../util/tid.js';

/** OpenAPI fragments of the rest_v1 surface (RESTBase's routes); they validate requests as well as document them. */
const tags = ['rest_v1 (Wikimedia REST API compatible)'];
const problem = (description: string) => ({ description, content: { 'application/problem+json': { schema: { type: 'object', description: "RESTBase's {type, title, method, detail, uri}" } } } });
const title = { name: 'title', in: 'path', required: true, schema: { type: 'string' }, description: 'Page title, underscores for spaces (a non-normalized title redirects)' };
const revision = { name: 'revision', in: 'path', required: true, schema: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER } };
const tid = { name: 'tid', in: 'path', required: true, schema: { type: 'string', pattern: TID_PATTERN.source }, description: "The render's time-uuid (from the ETag)" };
const redirect = { name: 'redirect', in: 'query', schema: { type: 'boolean' }, description: 'false: a redirect page is answered 200, not 302 to its target' };
const stash = { name: 'stash', in: 'query', schema: { type: 'boolean' }, description: 'Accepted for compatibility (every render is stored, so a later transform finds it anyway); counted as RESTBase counted stashes, five a second per client, and sent no-cache' };
const accept = { name: 'accept', in: 'header', schema: { type: 'string' }, description: 'text/html; profile=".../Specs/HTML/2.x.y" (default) or 999.x; another major is a 406' };
const errors = { 400: problem('Bad title or revision'), 403: problem('The revision is hidden'), 404: problem('No such page, revision or render'), 406: problem('An HTML version that cannot be served') };
/** What a route that may stash also answers. */
const stashErrors = { ...errors, 429: problem('More than five stashes a second from one client (request_rate_exceeded, as RESTBase answered it)') };
const htmlResponse = {
  description: 'Parsoid HTML; ETag "{revision}/{tid}"; 302 to the target for a redirect page (the page itself in the body)',
  content: { 'text/html': { schema: { type: 'string' } } },
};
const revisionItems = {
  description: '{items: [{title, page_id, rev, tid, namespace, user_id, user_text, timestamp, comment, tags, restrictions, page_language, redirect}]}',
  content: { 'application/json': { schema: { type: 'object', required: ['items'], properties: { items: { type: 'array', items: { type: 'object' } } } } } },
};
const formOrJson = (schema: Record<string, unknown>) => ({
  required: true,
  content: { 'application/json': { schema }, 'application/x-www-form-urlencoded': { schema }, 'multipart/form-data': { schema } },
});
const transform = (summary: string, body: Record<string, unknown>, response: Record<string, unknown>, headers: Record<string, unknown>[] = [], failures: Record<string, unknown> = errors) => ({
  bare: { tags, summary, parameters: headers, requestBody: formOrJson(body), responses: { 200: response, ...failures } },
  title: { tags, summary: `${summary}, for a page`, parameters: [title, ...headers], requestBody: formOrJson(body), responses: { 200: response, ...failures } },
  revision: { tags, summary: `${summary}, for a revision`, parameters: [title, revision, ...headers], requestBody: formOrJson(body), responses: { 200: response, ...failures } },
});

/** The bodies of the transforms, as RESTBase took them. */
export const toHtmlBody = {
  type: 'object', required: ['wikitext'], additionalProperties: false, properties: { wikitext: { type: 'string' }, body_only: { type: 'boolean' }, stash: { type: 'boolean' } },
} as const;
export const toWikitextBody = {
  type: 'object', required: ['html'], additionalProperties: false,
  properties: {
    html: { type: 'string' }, scrub_wikitext: { type: 'boolean' }, 'data-mw': { type: ['object', 'string'] },
    original: { type: ['object', 'string'], description: "Parsoid's original: {html: {body}, 'data-parsoid': {body}, wikitext: {body}} (instead of If-Match)" },
  },
} as const;

export const restV1Specs = {
  html: { tags, summary: 'Latest HTML of a page', parameters: [title, redirect, stash, accept], responses: { 200: htmlResponse, ...stashErrors } },
  htmlRevision: { tags, summary: 'HTML of a revision', parameters: [title, revision, redirect, stash, accept], responses: { 200: htmlResponse, ...stashErrors } },
  htmlTid: { tags, summary: 'HTML of one render (immutable)', parameters: [title, revision, tid, redirect, stash, accept], responses: { 200: htmlResponse, ...stashErrors } },
  dataParsoid: {
    tags, summary: 'data-parsoid of one render (the tid of the HTML the client holds)',
    parameters: [title, revision, tid, redirect],
    responses: { 200: { description: 'data-parsoid JSON', content: { 'application/json': { schema: { type: 'object' } } } }, ...errors },
  },
  title: { tags, summary: "A page's latest revision metadata", parameters: [title, redirect], responses: { 200: revisionItems, ...errors } },
  titleRevision: { tags, summary: "A revision's metadata", parameters: [title, revision, redirect], responses: { 200: revisionItems, ...errors } },
  revision: { tags, summary: 'Metadata of a revision id, wherever its page is now', parameters: [revision], responses: { 200: revisionItems, ...errors } },
  summary: {
    tags, summary: "A page's summary: title, extract and extract_html of the lead, thumbnail, timestamps, content URLs",
    parameters: [title, redirect],
    responses: { 200: { description: 'The summary', content: { 'application/json': { schema: { type: 'object' } } } }, ...errors },
  },
  toHtml: transform(
    'Wikitext to HTML',
    toHtmlBody,
    { description: 'Parsoid HTML', content: { 'text/html': { schema: { type: 'string' } } } },
    [],
    stashErrors,
  ),
  toWikitext: transform(
    'HTML to wikitext (selective serialisation from the render named by If-Match)',
    toWikitextBody,
    { description: 'Wikitext', content: { 'text/plain': { schema: { type: 'string' } } } },
    [{ name: 'if-match', in: 'header', schema: { type: 'string' }, description: 'The ETag "{revision}/{tid}" of the HTML the edit started from' }],
  ),
};
