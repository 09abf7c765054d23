import { TID_PATTERN } from '../../util/tid.js';

/** OpenAPI fragments of HTTP transactions; they validate requests as well as document them. */
const tags = ['transactions'];
const problem = (description: string) => ({ description, content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } });
const tid = {
  name: 'tid', in: 'path', required: true, description: 'A time-uuid (v1) chosen by the client: the transaction\'s id and time',
  schema: { type: 'string', pattern: TID_PATTERN.source },
};
const request = {
  type: 'object',
  required: ['method', 'uri'],
  properties: {
    method: { type: 'string', enum: ['PUT', 'POST', 'DELETE', 'PATCH', 'put', 'post', 'delete', 'patch'] },
    uri: { type: 'string', pattern: '^/', maxLength: 4096 },
    headers: { type: 'object', additionalProperties: { type: 'string' } },
    body: { description: 'A string, a JSON value (sent as JSON), or base64 with the header content-transfer-encoding: base64' },
  },
} as const;
const dependent = {
  ...request,
  description: 'A dependent request: it must be idempotent (a PUT naming what it writes, e.g. by tid, or a DELETE), as it may run again after a crash',
  properties: {
    ...request.properties,
    method: { type: 'string', enum: ['PUT', 'DELETE', 'put', 'delete'] },
    name: { type: 'string', pattern: '^[a-z][a-z0-9_-]{0,63}$', description: "The step's name: its result carries it, so a client reads it by name rather than by position" },
  },
} as const;

/** A transaction: its primary request and the dependents that follow it. */
export const transactionBody = {
  ...request,
  description: 'A primary conditional request and the requests that must follow once it succeeded, even if the process dies.',
  properties: { ...request.properties, then: { type: 'array', maxItems: 100, items: dependent } },
} as const;

export const transactionSpecs = {
  components: {
    Transaction: transactionBody,
  },
  put: {
    tags, summary: 'Run a transaction: its primary request, then (once that succeeded) every dependent, crash or not',
    parameters: [tid, { name: 'if-none-match', in: 'header', schema: { const: '*' }, description: 'Refuse (412) a tid already used' }],
    requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Transaction' } } } },
    responses: {
      200: { description: '{status, headers, body, then: [{name?, status, headers}]}: the primary succeeded and every dependent ran' },
      400: problem('Not a transaction, a dependent that is not idempotent, or a tid outside the lifetime'),
      412: problem("The primary's precondition failed (nothing ran), or the tid was used (If-None-Match: *)"),
    },
  },
  get: {
    tags, summary: 'A transaction: the request while it runs, its result once done',
    parameters: [tid],
    responses: { 200: { description: '{state, request} or {state, result}' }, 404: problem('Never performed'), 410: problem('Older than the transaction lifetime') },
  },
};
