import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { notFound } from '../../util/errors.js';
import type { Metrics } from '../../util/metrics.js';
import { buildOpenApi } from '../../router/openapi.js';
import type { Router } from '../../router/router.js';
import type { Module, RequestContext, Response, RouteRequest } from '../../router/types.js';
import { docPage } from './doc-page.js';

/** The docs page runs its own scripts (Swagger UI, served here), nothing from elsewhere. */
const DOC_PAGE_POLICY = "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'";

const require = createRequire(import.meta.url);
const SWAGGER_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const SWAGGER_FILES = new Set(['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'favicon-32x32.png']);
const SWAGGER_TYPES: Record<string, string> = { '.css': 'text/css; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.png': 'image/png' };
const VERSION = (require('../../../../package.json') as { version: string }).version;

const ROOT_QUERY = [
  { name: 'spec', in: 'query', schema: { type: 'string' }, description: 'Answer the OpenAPI document' },
  { name: 'doc', in: 'query', schema: { type: 'string' }, description: 'Answer a docs page' },
];

interface SystemOptions {
  router: Router;
  modules: () => Module[];
  domains: string[];
  metrics: Metrics;
  /** What /_health says beyond "ok": the wikis' circuits and change followers. */
  health?: () => Promise<{ status: 'ok' | 'degraded' | 'down' } & Record<string, unknown>>;
}

/** Root listing, health, metrics, and per-domain API roots with the OpenAPI document and its docs page. */
export function systemModules({ router, modules, domains, metrics, health }: SystemOptions): Module[] {
  const specs = new Map<string, { body: string; etag: string }>();
  // The internal API is described only to those who may call it.
  const spec = (domain: string, internal: boolean) => {
    const key = `${internal ? 'sys' : 'public'}\u0000${domain}`;
    let cached = specs.get(key);
    if (!cached) {
      const body = JSON.stringify(buildOpenApi(router, modules(), domain, VERSION, internal));
      cached = { body, etag: `"${createHash('sha1').update(body).digest('base64url').slice(0, 16)}"` };
      specs.set(key, cached);
    }
    return cached;
  };
  const apiRoot = (req: RouteRequest, ctx: RequestContext): Response => {
    if (req.query.has('spec')) {
      const { body, etag } = spec(req.domain, ctx.admin);
      // Two documents at one URL: a shared cache must not hand the admin's to the public.
      const cacheControl = ctx.admin ? 'private, no-cache' : 'no-cache';
      return { status: 200, headers: { 'content-type': 'application/json', etag, 'cache-control': cacheControl, vary: 'Authorization' }, body };
    }
    if (req.query.has('doc')) {
      return { status: 200, headers: { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': DOC_PAGE_POLICY }, body: docPage(req.domain) };
    }
    return { status: 200, body: { items: router.listChildren(req.path) } };
  };
  const staticFiles = new Map<string, Buffer>();
  return [
    {
      name: 'system',
      api: 'global',
      routes: [
        { method: 'GET', path: '/', handler: () => ({ status: 200, body: { items: domains } }) },
        // 200 while the process serves (stored content survives a wiki down, and a Cassandra node
        // down while quorum holds): `degraded` and the details say what to look at. 503 when
        // storage does not answer: then nothing can be served.
        {
          method: 'GET',
          path: '/_health',
          handler: async () => {
            const body = (await health?.()) ?? { status: 'ok' as const };
            return { status: body.status === 'down' ? 503 : 200, headers: { 'cache-control': 'no-cache' }, body };
          },
        },
        {
          method: 'GET',
          path: '/metrics',
          handler: async () => ({
            status: 200,
            headers: { 'content-type': metrics.registry.contentType, 'cache-control': 'no-cache' },
            body: await metrics.registry.metrics(),
          }),
        },
        {
          method: 'GET',
          path: '/_static/swagger-ui/{file}',
          handler: (req) => {
            const file = req.params.file!;
            if (!SWAGGER_FILES.has(file)) throw notFound(`No static file '${file}'.`);
            let bytes = staticFiles.get(file);
            if (!bytes) staticFiles.set(file, (bytes = fs.readFileSync(path.join(SWAGGER_DIR, file))));
            return { status: 200, headers: { 'content-type': SWAGGER_TYPES[path.extname(file)]!, 'cache-control': 'public, max-age=86400' }, body: bytes };
          },
        },
      ],
    },
    {
      name: 'v1-root',
      api: 'v1',
      routes: [{ method: 'GET', path: '/', handler: apiRoot, spec: { summary: 'List the API; ?spec gives this document, ?doc a docs page', tags: ['meta'], parameters: ROOT_QUERY } }],
    },
    {
      name: 'sys-root',
      api: 'sys',
      routes: [{ method: 'GET', path: '/', handler: apiRoot, spec: { summary: 'List the internal API', tags: ['meta'], parameters: ROOT_QUERY } }],
    },
  ];
}
