import type { Router } from './router.js';
import type { Module } from './types.js';

const PROBLEM_SCHEMA = {
  type: 'object',
  description: 'RFC 9457 problem details',
  required: ['type', 'title', 'status'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    instance: { type: 'string' },
  },
};

/**
 * The OpenAPI 3.1 document of one domain, assembled from the modules' route fragments.
 * Paths are relative to `/{domain}`: public routes under /v1, internal ones under /sys.
 */
export function buildOpenApi(router: Router, modules: Module[], domain: string, version: string, internal = false): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const { api, route, template } of router.routes()) {
    if (api === 'global' || (api === 'sys' && !internal)) continue;
    const path = template.slice('/{domain}'.length);
    const declared = (route.spec?.parameters as { name: string; in: string }[] | undefined) ?? [];
    const pathParams = [...path.matchAll(/\{([^}]+)\}/g)]
      .map((m) => m[1]!)
      .filter((name) => !declared.some((p) => p.in === 'path' && p.name === name))
      .map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
    const operation: Record<string, unknown> = {
      responses: { default: { description: 'An error', content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } } },
      ...route.spec,
      parameters: [...declared, ...pathParams],
    };
    if (api === 'sys') {
      operation.security = [{ adminToken: [] }];
      operation.tags = [...((operation.tags as string[] | undefined) ?? []), 'internal'];
    }
    (paths[path] ??= {})[route.method.toLowerCase()] = operation;
  }
  const schemas: Record<string, unknown> = { Problem: PROBLEM_SCHEMA };
  for (const module of modules) Object.assign(schemas, module.components);
  return {
    openapi: '3.1.0',
    info: {
      title: `Content API for ${domain}`,
      version,
      description: 'Parsoid HTML, wikitext and revision metadata of a MediaWiki wiki, served from storage. Routes under /sys are internal and need the admin credential.',
    },
    servers: [{ url: `/${domain}` }],
    paths,
    components: { schemas, securitySchemes: { adminToken: { type: 'http', scheme: 'bearer' } } },
  };
}
