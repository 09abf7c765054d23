import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { Handler, RequestContext, Response, RouteRequest } from './types.js';

/** The type a JSON schema (declared `as const`) describes. */
export type BodyOf<S> = S extends JSONSchema ? FromSchema<S> : never;


/**
 * A handler typed by the schema its route validates the body against (the router does, before
 * any handler runs: see validation.ts), as Fastify's type providers do: give it the same schema
 * object the route's spec names, declared `as const`. (`S` is not constrained to JSONSchema
 * where it is inferred: TypeScript gives up on that check for schemas of a few properties.)
 */
export function withBody<S extends object>(
  _schema: S,
  handler: (req: RouteRequest & { body: BodyOf<S> }, ctx: RequestContext) => Promise<Response> | Response,
): Handler {
  return handler as unknown as Handler;
}
