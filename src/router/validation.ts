import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { HttpError } from '../errors.js';
import { formTypeOf } from '../http/form.js';
import type { Route } from './types.js';

/** What a route's schemas check, taken from the request before its handler runs. */
export interface Checked {
  params: Record<string, string>;
  query: URLSearchParams;
  headers: Record<string, string | undefined>;
  body: unknown;
}

export type RequestValidator = (req: Checked) => void;

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema?: Record<string, unknown>;
}

/**
 * Path, query and header values are text: their schemas are checked with type coercion (on a
 * copy: handlers still get the text). JSON bodies are checked as they are; form bodies are text
 * too, and coerced in place, so handlers get the types the schema names.
 */
const coercing = new Ajv2020({ strict: false, allErrors: false, coerceTypes: true });
const exact = new Ajv2020({ strict: false, allErrors: false });

const PLACES = { path: 'path parameter', query: 'query parameter', header: 'header' } as const;

function objectSchema(parameters: Parameter[], place: Parameter['in'], closed: boolean): Record<string, unknown> | undefined {
  const own = parameters.filter((p) => p.in === place);
  if (own.length === 0 && !closed) return undefined;
  const key = (name: string) => (place === 'header' ? name.toLowerCase() : name);
  return {
    type: 'object',
    properties: Object.fromEntries(own.map((p) => [key(p.name), p.schema ?? {}])),
    required: own.filter((p) => p.required || p.in === 'path').map((p) => key(p.name)),
    additionalProperties: !closed,
  };
}

function describeError(place: string, error: ErrorObject): string {
  const field = error.instancePath.replace(/^\//, '').replace(/\//g, '.');
  if (error.keyword === 'additionalProperties') {
    const extra = (error.params as { additionalProperty: string }).additionalProperty;
    return field ? `${place} '${field}' has no field '${extra}'` : `${place} '${extra}' is not accepted here`;
  }
  if (error.keyword === 'enum') return `${place} '${field}' must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  return field ? `${place} '${field}' ${error.message}` : `${place} ${error.message}`;
}

function check(validate: ValidateFunction | undefined, data: unknown, place: string): void {
  if (!validate || validate(data)) return;
  const error = validate.errors![0]!;
  const detail = describeError(place, error);
  throw new HttpError(400, 'invalid-request', `${detail.charAt(0).toUpperCase()}${detail.slice(1)}.`, {
    extensions: { errors: validate.errors!.map((e) => ({ in: place, field: e.instancePath, message: e.message })) },
  });
}

/**
 * Compiles a route's OpenAPI parameters and JSON request body into one validator, once, at start.
 * `components` resolve `#/components/schemas/...` references. Query parameters a route does not
 * declare are refused: a filter a client believes applied must not be silently ignored.
 */
export function compileValidator(route: Route, components: Record<string, unknown>): RequestValidator | undefined {
  const spec = route.spec;
  if (!spec) return undefined;
  const parameters = (spec.parameters as Parameter[] | undefined) ?? [];
  const withComponents = (schema: Record<string, unknown> | undefined) => schema && { ...schema, components: { schemas: components } };
  const compile = (ajv: Ajv2020, schema: Record<string, unknown> | undefined) => (schema ? ajv.compile(withComponents(schema)!) : undefined);
  const path = compile(coercing, objectSchema(parameters, 'path', false));
  const query = compile(coercing, objectSchema(parameters, 'query', true));
  const headers = compile(coercing, objectSchema(parameters, 'header', false));
  const bodySchema = (spec.requestBody as { content?: Record<string, { schema?: Record<string, unknown> }> } | undefined)?.content?.['application/json']?.schema;
  const readsJson = route.body === 'json' || route.body === 'optional-json' || route.body === 'form';
  const body = readsJson ? compile(exact, bodySchema) : undefined;
  const formBody = route.body === 'form' ? compile(coercing, bodySchema) : undefined;
  return (req) => {
    if (path) check(path, { ...req.params }, PLACES.path);
    if (query) check(query, Object.fromEntries(req.query), PLACES.query);
    if (headers) check(headers, { ...req.headers }, PLACES.header);
    if (req.body === undefined || req.body === null) return;
    const isForm = formBody && typeof req.body === 'object' && formTypeOf(req.headers['content-type']) !== undefined;
    check(isForm ? formBody : body, req.body, 'body');
  };
}
