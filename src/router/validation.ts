import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { HttpError } from '../util/errors.js';
import { formTypeOf } from '../util/form-type.js';
import { isFormKind, type Route } from './types.js';

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
// The schemas are the service's own, checked against JSON Schema's meta-schema by the route
// tests (test/unit/router/validation.test.ts): checking them again in every process compiled that
// meta-schema at its first request, a tenth of a second each start.
const coercing = new Ajv2020({ strict: false, allErrors: false, coerceTypes: true, validateSchema: false });
const exact = new Ajv2020({ strict: false, allErrors: false, validateSchema: false });

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

/** How clients write a flag in a URL or a form (`body_only=1`, `redirect=no`), in the schema's own words. */
const FLAG_WORDS: Record<string, 'true' | 'false'> = { true: 'true', 1: 'true', yes: 'true', on: 'true', false: 'false', 0: 'false', no: 'false', off: 'false' };

const isFlag = (schema: Record<string, unknown> | undefined) => schema?.type === 'boolean';

/** Flags of text values (query, form fields) in their canonical words; anything else is left for the schema to refuse. */
function canonicalFlag(value: string): string {
  return FLAG_WORDS[value.trim().toLowerCase()] ?? value;
}

export interface ValidatorOptions {
  /**
   * Ignore query parameters the route does not declare (RESTBase's surface: caches and apps add
   * their own). Elsewhere they are refused: a filter a client believes applied (a misspelt `ts`)
   * must not be silently ignored.
   */
  openQuery?: boolean;
}

/**
 * Validators compiled so far, by the schemas' components, engine and text: routes of every domain
 * and API share most schemas, and each compilation walks the components too.
 */
const compiledSchemas = new WeakMap<Record<string, unknown>, Map<string, ValidateFunction>>();

/**
 * Compiles a route's OpenAPI parameters and JSON request body into one validator, once, at the
 * route's first request: compiling every route's schemas took the larger part of start-up.
 * `components` resolve `#/components/schemas/...` references. Boolean query parameters and form
 * fields take `true/false/1/0/yes/no/on/off` and reach the handler as `true`/`false`.
 */
export function compileValidator(route: Route, components: Record<string, unknown>, options: ValidatorOptions = {}): RequestValidator | undefined {
  if (!route.spec) return undefined;
  let validate: RequestValidator | undefined;
  return (req) => (validate ??= compileNow(route.spec!, route, components, options))(req);
}

function compileNow(spec: Record<string, unknown>, route: Route, components: Record<string, unknown>, options: ValidatorOptions): RequestValidator {
  const parameters = (spec.parameters as Parameter[] | undefined) ?? [];
  let known = compiledSchemas.get(components);
  if (!known) compiledSchemas.set(components, (known = new Map()));
  const compile = (ajv: Ajv2020, schema: Record<string, unknown> | undefined) => {
    if (!schema) return undefined;
    const key = `${ajv === exact ? 'e' : 'c'}${JSON.stringify(schema)}`;
    let validate = known.get(key);
    if (!validate) known.set(key, (validate = ajv.compile({ ...schema, components: { schemas: components } })));
    return validate;
  };
  const path = compile(coercing, objectSchema(parameters, 'path', false));
  const query = compile(coercing, objectSchema(parameters, 'query', !options.openQuery));
  const headers = compile(coercing, objectSchema(parameters, 'header', false));
  const queryFlags = parameters.filter((p) => p.in === 'query' && isFlag(p.schema)).map((p) => p.name);
  const bodySchema = (spec.requestBody as { content?: Record<string, { schema?: Record<string, unknown> }> } | undefined)?.content?.['application/json']?.schema;
  const bodyFlags = Object.entries((bodySchema?.properties as Record<string, Record<string, unknown>> | undefined) ?? {}).filter(([, s]) => isFlag(s)).map(([name]) => name);
  const readsJson = route.body === 'json' || route.body === 'optional-json' || isFormKind(route.body);
  const body = readsJson ? compile(exact, bodySchema) : undefined;
  const formBody = isFormKind(route.body) ? compile(coercing, bodySchema) : undefined;
  return (req) => {
    if (path) check(path, { ...req.params }, PLACES.path);
    for (const name of queryFlags) {
      const value = req.query.get(name);
      if (value !== null) req.query.set(name, canonicalFlag(value));
    }
    if (query) check(query, Object.fromEntries(req.query), PLACES.query);
    if (headers) check(headers, { ...req.headers }, PLACES.header);
    if (req.body === undefined || req.body === null) return;
    const isForm = formBody && typeof req.body === 'object' && formTypeOf(req.headers['content-type']) !== undefined;
    if (isForm) {
      const fields = req.body as Record<string, unknown>;
      for (const name of bodyFlags) if (typeof fields[name] === 'string') fields[name] = canonicalFlag(fields[name] as string);
    }
    check(isForm ? formBody : body, req.body, 'body');
  };
}
