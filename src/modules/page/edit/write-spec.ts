import { TID_PATTERN } from '../../../util/tid.js';

/** OpenAPI fragments of saves and transforms; they validate requests as well as document them. */
export const problem = (description: string) => ({ description, content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } });
const title = { name: 'title', in: 'path', required: true, schema: { type: 'string' }, description: 'Page title (normalized as the wiki does)' };
const REVID_SCHEMA = { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER } as const;
const revid = { name: 'revid', in: 'path', required: true, schema: REVID_SCHEMA, description: 'A MediaWiki revision id' };
const tid = { type: 'string', pattern: TID_PATTERN.source, description: 'The tid of a stored render (v1 time-uuid)' } as const;
/** Bodies that travel as JSON, or as the forms HTML clients and MediaWiki send. */
export const formOrJson = (schema: object) => ({
  required: true,
  content: { 'application/json': { schema }, 'application/x-www-form-urlencoded': { schema }, 'multipart/form-data': { schema } },
});
const saveErrors = {
  400: problem('A bad body: neither or both of wikitext and html, a tid that is not a stored render of the page, a base_revid of another page'),
  403: problem("The wiki refused the caller (not logged in, blocked, protected page, bad token); wiki_code says which"),
  404: problem('The page was deleted meanwhile'),
  409: problem('An edit conflict: base_revid is not the latest revision (latest_revid says which), another save is in progress, or the page exists'),
  413: problem('The content is too big'),
  415: problem('Not JSON or a form'),
  422: problem('Spam or abuse filters refused the content'),
  429: problem('Rate limited by the wiki'),
  503: problem('The wiki cannot be reached (nothing was saved)'),
};
const saved = {
  description: 'The new revision: {title, rev, tid}; Location is its HTML',
  content: { 'application/json': { schema: { type: 'object', properties: { title: { type: 'string' }, rev: { type: 'integer' }, tid: { type: ['string', 'null'] } } } } },
};
const unchanged = { description: 'The wiki had nothing to change: {title, rev, tid, nochange: true}' };

/** The body of `POST /page/{title}` (a save). */
export const saveBody = {
  type: 'object',
  properties: {
    wikitext: { type: 'string', description: 'The new wikitext (or give html)' },
    html: { type: 'string', description: 'The edited HTML (or give wikitext)' },
    'data-mw': { type: ['object', 'string'], description: "The edited HTML's data-mw, if it is not inline (a JSON object, or its text in a form)" },
    tid: { ...tid, description: 'The stored render the HTML was edited from: its data-parsoid and data-mw are used (selective serialisation)' },
    base_revid: { ...REVID_SCHEMA, description: 'The revision the edit is based on; absent only to create the page' },
    section: {
      type: 'integer', minimum: 0, maximum: 100000,
      description: 'Save one section (data-mw-section-id; with its subsections): wikitext or html is that section\'s, read with ?section=; the others keep every byte',
    },
    comment: { type: 'string', maxLength: 2000, description: 'Edit summary' },
    minor: { type: 'boolean' },
    bot: { type: 'boolean' },
    csrf_token: { type: 'string', maxLength: 200, description: "The caller's own CSRF token from the wiki (meta=tokens); needed when the caller is known by a Cookie" },
  },
  additionalProperties: false,
} as const;
const csrfHeader = { name: 'x-csrf-token', in: 'header', schema: { type: 'string', maxLength: 200 }, description: "The caller's own CSRF token from the wiki; needed when the caller is known by a Cookie (or give csrf_token)" };

export const saveSpecs = {
  post: {
    tags: ['page content'],
    summary: 'Save the page (wikitext or HTML) as the caller; its Cookie or Authorization goes to the wiki',
    parameters: [title, csrfHeader],
    requestBody: formOrJson(saveBody),
    responses: { 200: unchanged, 201: saved, ...saveErrors },
  },
  put: {
    tags: ['page content'],
    summary: 'Save one property (html or wikitext) as the caller; the body is the content, If-Match its base',
    parameters: [
      title,
      { name: 'prop', in: 'path', required: true, schema: { enum: ['html', 'wikitext'] } },
      { name: 'if-match', in: 'header', schema: { type: 'string', pattern: `^"[1-9]\\d*(/(${TID_PATTERN.source.replace(/^\^|\$$/g, '')}))?"$` }, description: 'The ETag read with the content, "{revid}/{tid}": the base revision and the render the HTML was edited from' },
      { name: 'if-none-match', in: 'header', schema: { const: '*' }, description: 'Create the page (it must not exist)' },
      csrfHeader,
      { name: 'comment', in: 'query', schema: { type: 'string', maxLength: 2000 } },
      { name: 'minor', in: 'query', schema: { type: 'boolean' } },
      { name: 'bot', in: 'query', schema: { type: 'boolean' } },
    ],
    requestBody: { required: true, content: { 'text/html': { schema: { type: 'string' } }, 'text/plain': { schema: { type: 'string' } } } },
    responses: { 200: unchanged, 201: saved, 428: problem('Neither If-Match nor If-None-Match: *'), ...saveErrors },
  },
};

const bodyOnly = { type: 'boolean', description: 'Only the body of the document' } as const;

/** The bodies of the transforms. */
export const toHtmlBody = {
  type: 'object', required: ['wikitext'], properties: { wikitext: { type: 'string' }, body_only: bodyOnly }, additionalProperties: false,
} as const;
export const toWikitextBody = {
  type: 'object', required: ['html'], additionalProperties: false,
  properties: { html: { type: 'string' }, tid: { ...tid, description: 'The stored render the HTML was edited from (else the newest of the revision)' }, 'data-mw': saveBody.properties['data-mw'] },
} as const;
/** The body of a save's primary step. */
export const recordSaveBody = {
  type: 'object', required: ['from', 'row'],
  properties: { from: { type: ['integer', 'null'], description: 'The latest revision the save read' }, row: { type: 'object', description: 'The revision as far as known' } },
} as const;
const transformErrors = { 400: problem('No content, or Parsoid refused it'), 404: problem('No such revision'), 415: problem('Not JSON or a form') };
const transformPaths = (summary: string, body: object, responses: Record<string, unknown>) => ({
  bare: { tags: ['transforms'], summary, requestBody: formOrJson(body), responses },
  title: { tags: ['transforms'], summary: `${summary}, for a page`, parameters: [title], requestBody: formOrJson(body), responses },
  revision: { tags: ['transforms'], summary: `${summary}, for a revision of a page`, parameters: [title, revid], requestBody: formOrJson(body), responses },
});

export const transformSpecs = {
  toHtml: transformPaths(
    'Wikitext to HTML (Parsoid)',
    toHtmlBody,
    { 200: { description: 'Parsoid HTML', content: { 'text/html': { schema: { type: 'string' } } } }, ...transformErrors },
  ),
  toWikitext: transformPaths(
    'HTML to wikitext (Parsoid; selective serialisation from the stored render of the revision)',
    toWikitextBody,
    { 200: { description: 'Wikitext', content: { 'text/plain': { schema: { type: 'string' } } } }, ...transformErrors },
  ),
};

const titleOfSave = { name: 'title', in: 'path', required: true, schema: { type: 'string' }, description: 'Normalized page title' };
export const saveRecordSpecs = {
  recordSave: {
    tags: ['page saves'],
    summary: "A save's primary step: store the revision the wiki accepted and make it the page's latest (conditionally)",
    parameters: [titleOfSave, { ...revid, name: 'rev' }],
    requestBody: {
      required: true,
      content: { 'application/json': { schema: recordSaveBody } },
    },
    responses: { 200: { description: 'Already recorded, or a later revision is the latest' }, 201: { description: 'Recorded' }, 409: problem('The latest revision kept changing') },
  },
  releaseLock: {
    tags: ['page saves'],
    summary: 'Free the page of a save (only if this save still holds it)',
    parameters: [titleOfSave, { name: 'lock', in: 'path', required: true, schema: { type: 'string', pattern: TID_PATTERN.source } }],
    responses: { 204: { description: 'Freed, or held by no save of this lock' } },
  },
  purge: {
    tags: ['page saves'],
    summary: "A save's last step: PURGE the page's changed URLs from the HTTP caches in front (purge_hosts)",
    parameters: [titleOfSave],
    responses: { 204: { description: 'Purged (or no cache is configured)' }, 503: problem('A cache could not be told; the transaction retries later') },
  },
  storeRender: {
    tags: ['page saves'],
    summary: "A save's dependent step: store the revision's exact metadata and its render",
    parameters: [titleOfSave, { ...revid, name: 'rev' }],
    responses: { 200: { description: '{title, rev, tid}; ETag "{rev}/{tid}"' }, 404: problem('The revision is not stored') },
  },
};
