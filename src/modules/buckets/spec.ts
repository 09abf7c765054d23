import type { Route } from '../../router/types.js';

/** OpenAPI fragments of the bucket modules; they validate requests as well as document them. */
const tags = ['buckets'];
const problem = (description: string) => ({ description, content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } });
const listing = {
  description: 'One page of names and a paging token',
  content: { 'application/json': { schema: { type: 'object', properties: { items: { type: 'array', items: { type: 'string' } }, next: { type: 'string' } } } } },
};
const paging = [
  { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000 } },
  { name: 'next', in: 'query', schema: { type: 'string' }, description: 'Paging token from the previous page' },
];
const blob = { description: 'The stored bytes with their entity headers (ETag is the revision tid)', content: { '*/*': {} } };
const saved = { description: 'Saved; the body and ETag give the new tid', content: { 'application/json': { schema: { type: 'object', properties: { tid: { type: 'string' } } } } } };
const anyBody = { required: true, content: { '*/*': {} } };
const conditional = [
  { name: 'if-match', in: 'header', schema: { type: 'string', maxLength: 200 }, description: 'Save only if this is still the latest ETag' },
  { name: 'if-none-match', in: 'header', schema: { const: '*' }, description: 'Save only if nothing is stored yet (only * is meaningful on a write)' },
];

/** Names travel in URLs and in storage keys: printable, bounded. */
const NAME = { type: 'string', minLength: 1, maxLength: 1024, pattern: '^[^\\u0000-\\u001f\\u007f]*$' };
const PATH_SCHEMAS: Record<string, { schema: Record<string, unknown>; description: string }> = {
  bucket: { schema: { type: 'string', pattern: '^[A-Za-z0-9_][A-Za-z0-9_.\\-]{0,99}$' }, description: 'Bucket name' },
  key: { schema: NAME, description: 'Key (percent-encoded; may contain /)' },
  name: { schema: NAME, description: 'Object name' },
  prop: { schema: NAME, description: 'Property name' },
  revision: { schema: { type: 'string', maxLength: 64 }, description: 'A revision tid (v1 time-uuid) or a time (ISO 8601 or 20140101T20:23:22.100Z)' },
};

/** Declares the schemas of a bucket route's path parameters, which validate them before the handler. */
export function withPathParameters(routes: Route[]): Route[] {
  return routes.map((route) => {
    const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
    const declared = (route.spec?.parameters as { name: string; in: string }[] | undefined) ?? [];
    const added = names.filter((n) => PATH_SCHEMAS[n] && !declared.some((p) => p.in === 'path' && p.name === n));
    const parameters = [...added.map((n) => ({ name: n, in: 'path', required: true, ...PATH_SCHEMAS[n] })), ...declared];
    return { ...route, spec: { ...route.spec, parameters } };
  });
}
const indexesSchema = {
  type: 'object',
  description: 'Indexes over an entity header of the values, by name: {header: "content-type", revisions: "latest" | "all"}; set when the bucket is created',
  additionalProperties: { type: 'object', required: ['header'], properties: { header: { type: 'string' }, revisions: { enum: ['latest', 'all'] } } },
};
const retentionBody = {
  required: false,
  content: { 'application/json': { schema: { type: 'object', properties: { revisionRetentionPolicy: { type: 'object' }, indexes: indexesSchema } } } },
};
const indexListing = {
  description: 'One page of the keys (and revisions) whose value carries the header value, and a paging token',
  content: { 'application/json': { schema: { type: 'object', properties: { items: { type: 'array', items: { type: 'object', properties: { key: { type: 'string' }, tid: { type: 'string' } } } }, next: { type: 'string' } } } } },
};

export const bucketSpecs = {
  createKeyValueBucket: {
    tags, summary: 'Create a key-value bucket (optionally with indexes over an entity header)',
    requestBody: { required: false, content: { 'application/json': { schema: { type: 'object', properties: { indexes: indexesSchema } } } } },
    responses: { 201: { description: 'Created' }, 200: { description: 'Already there' }, 400: problem('Invalid options') },
  },
  createRevisionedBucket: {
    tags, summary: 'Create a revisioned bucket (optionally with a retention policy)', requestBody: retentionBody,
    responses: { 201: { description: 'Created' }, 200: { description: 'Already there or updated' }, 400: problem('Invalid options') },
  },
  byIndex: {
    tags, summary: "Keys whose value carries an entity header's value, by an index the bucket declares (`//` before the index name)",
    parameters: [
      { name: 'index', in: 'path', required: true, schema: { type: 'string' } },
      { name: 'value', in: 'path', required: true, schema: { type: 'string', minLength: 1 } },
      ...paging,
    ],
    responses: { 200: indexListing, 404: problem('No such bucket or index') },
  },
  listKeys: { tags, summary: 'List the keys of a bucket, paged, each once', parameters: paging, responses: { 200: listing, 404: problem('No such bucket') } },
  putValue: {
    tags, summary: 'Store a value', parameters: conditional, requestBody: anyBody,
    responses: { 201: saved, 400: problem('Empty body, no content-type or a bad key'), 412: problem('The precondition failed') },
  },
  getValue: { tags, summary: 'Read a value', responses: { 200: blob, 404: problem('No such key') } },
  deleteValue: { tags, summary: 'Delete a value', responses: { 204: { description: 'Deleted' } } },
  putRevision: {
    tags, summary: 'Save a new revision', parameters: conditional, requestBody: anyBody,
    responses: { 201: saved, 400: problem('Empty body, no content-type or a bad key'), 412: problem('Another revision is the latest') },
  },
  getLatest: {
    tags, summary: 'The latest revision, or the one current at ?ts=',
    parameters: [{ name: 'ts', in: 'query', schema: { type: 'string' }, description: 'ISO 8601 or 20140101T20:23:22.100Z' }],
    responses: { 200: blob, 400: problem('Bad time'), 404: problem('Nothing stored (at that time)') },
  },
  listRevisions: { tags, summary: 'List the revisions (tids), newest first, paged', parameters: paging, responses: { 200: listing } },
  getRevision: {
    tags, summary: 'One revision by tid (immutable) or the one current at a time',
    responses: { 200: blob, 400: problem('Neither a tid nor a time'), 404: problem('No such revision') },
  },
  putRevisionWithTid: {
    tags, summary: 'Save a revision under a chosen tid (needs the admin credential)', requestBody: anyBody,
    responses: { 201: saved, 403: problem('Not allowed'), 412: problem('That revision exists') },
  },
  postObjectTransaction: {
    tags, summary: 'Save a property as the primary of a transaction: its dependents (sibling properties, indexes) follow, crash or not',
    requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Transaction' } } } },
    responses: { 200: { description: 'The transaction result' }, 400: problem('The primary does not write this property'), 412: problem("The primary's precondition failed") },
  },
  objectRedirect: { tags, summary: "Redirect to the object's property listing", responses: { 302: { description: 'To {name}/' } } },
  listProperties: { tags, summary: "List an object's properties", parameters: paging, responses: { 200: listing, 404: problem('No such object') } },
};
