import { TABLE_NAME } from '../../storage/schema.js';
import { keySegmentNames } from './key-paths.js';

/** OpenAPI fragments of the table storage API. */
const json = (ref: string) => ({ content: { 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } } });
const problem = (description: string) => ({ description, content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } });
const tags = ['table storage'];
const tableParam = { name: 'table', in: 'path', required: true, schema: { type: 'string', pattern: TABLE_NAME.source } };
const parameters = [tableParam];

/** Parameters of a GET by key path: the table (and index), `count` key segments, range and paging. */
function keyPathParameters(count: number, index: boolean) {
  const range = (op: string, meaning: string) => ({
    name: op, in: 'query', required: false, schema: { type: 'string' },
    description: `The next key after those the path names ${meaning} this value (with ${op.startsWith('g') ? 'lt or le' : 'gt or ge'}: a range).`,
  });
  return [
    tableParam,
    ...(index ? [{ name: 'index', in: 'path', required: true, schema: { type: 'string' }, description: 'A secondary index the schema declares' }] : []),
    ...keySegmentNames.slice(0, count).map((name, i) => ({
      name, in: 'path', required: true, schema: { type: 'string', minLength: 1 },
      description: `Key ${i + 1} of the ${index ? "index's" : "table's"} keys in declared order: hash keys, then range keys`,
    })),
    range('gt', 'is greater than'), range('ge', 'is at least'), range('lt', 'is less than'), range('le', 'is at most'),
    { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 1000 } },
    { name: 'next', in: 'query', required: false, schema: { type: 'string' }, description: 'Opaque paging token from a previous answer' },
    { name: 'order', in: 'query', required: false, schema: { enum: ['asc', 'desc'] }, description: 'desc: the declared order fully reversed' },
  ];
}

/** The spec of GET `/table/{table}/{k1}…{kcount}`, or `/table/{table}//{index}/{k1}…`. */
export function keyPathSpec(count: number, index: boolean) {
  return {
    tags,
    parameters: keyPathParameters(count, index),
    summary: index ? 'Rows by secondary index: the index keys in the path' : 'A partition (hash keys in the path), or one row (every key)',
    responses: {
      200: {
        description: 'A partition or an index listing as {items, next?}; one row when the path names every primary key (with `Last-Modified` from its implicit `_tid`, if the table has one)',
        ...json('QueryResult'),
      },
      304: { description: 'Not modified (If-None-Match, or If-Modified-Since for one row)' },
      400: problem('A key or a parameter the table cannot take (each names the parameter)'),
      404: problem('No such table, index or row'),
    },
  };
}

export const tableSpecs = {
  components: {
    TableSchema: {
      type: 'object',
      description: "A table schema in RESTBase's table storage format.",
      required: ['attributes', 'index'],
      properties: {
        table: { type: 'string' },
        version: { type: 'integer', minimum: 1 },
        attributes: { type: 'object', additionalProperties: { type: 'string' } },
        index: { type: 'array', items: { $ref: '#/components/schemas/IndexElement' } },
        secondaryIndexes: { type: 'object', additionalProperties: { type: 'array', items: { $ref: '#/components/schemas/IndexElement' } } },
        domain: { type: 'string', description: 'As GET answers it; must be the URL\'s domain' },
        revisionRetentionPolicy: {
          type: 'object',
          required: ['type'],
          properties: {
            type: { enum: ['all', 'latest', 'latest_hash', 'interval', 'ttl'] },
            count: { type: 'integer', minimum: 0 }, grace_ttl: { type: 'integer', minimum: 0 }, interval: { type: 'integer', minimum: 0 }, ttl: { type: 'integer', minimum: 0 },
          },
        },
        options: { type: 'object' },
      },
    },
    IndexElement: {
      type: 'object',
      required: ['attribute', 'type'],
      properties: { attribute: { type: 'string' }, type: { enum: ['hash', 'range', 'static', 'proj'] }, order: { enum: ['asc', 'desc'] } },
    },
    TableQuery: {
      type: 'object',
      properties: {
        index: { type: 'string' },
        attributes: { type: 'object', description: 'Key conditions: a value (eq) or {eq|lt|gt|le|ge|between: ...}.' },
        proj: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
        order: { type: 'object', additionalProperties: { enum: ['asc', 'desc'] } },
        limit: { type: 'integer', minimum: 1, maximum: 1000 },
        next: { type: ['string', 'null'], description: 'Opaque paging token from a previous answer.' },
        distinct: { type: 'boolean', description: 'One item per partition: its hash keys and static columns' },
        withTTL: { type: 'boolean', description: 'Add _ttl: seconds left for rows written with a TTL, else null' },
      },
    },
    TableWrite: {
      type: 'object',
      required: ['attributes'],
      properties: {
        attributes: {
          type: 'object',
          description: 'Row values; blobs as base64; `_ttl` in seconds. In a table keyed by no timeuuid, `_tid` is filled with the write\'s time-uuid unless given.',
        },
        if: {
          description: '"not exists", or attributes that must hold their values (`{_tid: {eq}}`: nobody wrote the row since it was read); else 412', oneOf: [{ const: 'not exists' }, { type: 'object', additionalProperties: { type: 'object', properties: { eq: {} } } }] },
      },
    },
    QueryResult: {
      type: 'object',
      properties: { items: { type: 'array', items: { type: 'object' } }, next: { type: 'string' } },
    },
  },
  createTable: {
    tags, parameters, summary: 'Create a table, or migrate it to a higher schema version',
    requestBody: { required: true, ...json('TableSchema') },
    responses: { 201: { description: 'Created' }, 200: { description: 'Unchanged or migrated' }, 400: problem('Invalid schema or incompatible change') },
  },
  getSchema: {
    tags, parameters, summary: "Read a table's schema",
    responses: { 200: { description: 'The schema', ...json('TableSchema') }, 404: problem('No such table') },
  },
  dropTable: { tags, parameters, summary: 'Drop a table and all its rows', responses: { 204: { description: 'Dropped' }, 404: problem('No such table') } },
  put: {
    tags, parameters, summary: 'Write a row (optionally conditional)',
    requestBody: { required: true, ...json('TableWrite') },
    responses: { 201: { description: 'Written' }, 400: problem('Invalid write'), 412: problem('The condition failed; nothing was written') },
  },
  query: {
    tags, parameters, summary: 'Query rows (JSON query in the GET body); 404 when none matches, as RESTBase answered',
    requestBody: { required: false, ...json('TableQuery') },
    responses: { 200: { description: 'Matching rows and a paging token', ...json('QueryResult') }, 400: problem('Invalid query'), 404: problem('No row matches (the problem carries `items: []`), or no such table') },
  },
  postQuery: {
    tags, parameters, summary: 'Query rows (for clients that cannot send a GET body); 200 with no items when none matches',
    requestBody: { required: false, ...json('TableQuery') },
    responses: { 200: { description: 'Matching rows and a paging token', ...json('QueryResult') }, 400: problem('Invalid query') },
  },
  delete: {
    tags, parameters, summary: 'Delete rows by (partial) primary key',
    requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', required: ['attributes'] } } } },
    responses: { 204: { description: 'Deleted' }, 400: problem('Invalid key') },
  },
};
