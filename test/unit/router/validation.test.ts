import http from 'node:http';
import type { AddressInfo } from 'node:net';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { admin, request, startServer, type TestServer } from '../../helpers.js';

type Schema = Record<string, unknown>;
interface Parameter {
  name: string;
  in: string;
  schema?: Schema;
}

const ajv = new Ajv2020({ strict: false, coerceTypes: true });
/** rest_v1 answers errors in RESTBase's shape, Enterprise's surface in its own (`{status, message}`, no type); everything else in RFC 9457's. */
const problemType = (template: string) => (template.includes('/rest_v1/') ? 'https://mediawiki.org/wiki/HyperSwitch/errors/bad_request' : template.includes('/enterprise/') ? undefined : 'urn:problem:invalid-request');
/** An error's kind and text in any of the service's shapes (MediaWiki's REST API names them errorKey and messageTranslations). */
const typeOf = (json: any) => json.type ?? (json.errorKey === undefined ? undefined : `urn:problem:${json.errorKey}`);
const detailOf = (json: any) => json.detail ?? json.messageTranslations?.en ?? json.message;

const VALID: Record<string, string> = {
  title: 'Bodmin', prop: 'html', revision: '1', revid: '1', rev: '1', table: 't', bucket: 'b', key: 'k', name: 'n', file: 'swagger-ui.css',
  tid: '0e4f2a10-c8a1-11f1-8000-000000000001', lock: '0e4f2a10-c8a1-11f1-8000-000000000001', branch: '0e4f2a10-c8a1-11f1-8000-000000000001',
  format: 'wikitext', user: 'Someone',
};
/** Values that break common schema constraints; the first that the schema rejects is used. */
const CANDIDATES = ['not-a-number', '0', '-1', '99999999999999999999', '!!bad!!', '\u0001control'];

function violating(schema: Schema): string | undefined {
  const validate = ajv.compile(schema);
  const maxLength = schema.maxLength as number | undefined;
  // Past 2048 characters the router matches no route at all (404): longer values are not tried.
  const candidates = [...CANDIDATES, ...(maxLength && maxLength < 2000 ? ['x'.repeat(maxLength + 1)] : [])];
  return candidates.find((value) => !validate(value));
}

/**
 * Generated from the OpenAPI document, not written per route: every route that declares a schema
 * answers 400 to a request that violates it, before its handler runs.
 */
describe('routes validated by their own schemas', () => {
  let s: TestServer;
  let wiki: http.Server;
  before(async () => {
    // A wiki that refuses everything at once: routes that ask it fail without waiting out retries
    // (this suite checks what is refused before any handler runs).
    wiki = http.createServer((_req, res) => res.writeHead(404, { 'content-type': 'text/plain' }).end('no such wiki'));
    await new Promise<void>((resolve) => wiki.listen(0, '127.0.0.1', resolve));
    const { port } = wiki.address() as AddressInfo;
    s = await startServer({}, { action_api: `http://127.0.0.1:${port}/api.php`, rest_api: `http://127.0.0.1:${port}/rest.php` });
  });
  after(async () => {
    await s.close();
    wiki.close();
  });

  const routesWithSpecs = () => s.app.router.routes().filter((r) => r.route.spec && r.api !== 'global');
  const fill = (template: string, override: Record<string, string> = {}) =>
    template.replace(/\{(\w+)\}/g, (_, name: string) => (name === 'domain' ? s.domain : encodeURIComponent(override[name] ?? VALID[name] ?? 'x')));

  it('documents every route of every module in the OpenAPI document, with its schemas', async () => {
    const spec = (await request(`${s.base}/${s.domain}/v1/?spec`, { headers: admin })).json;
    const undocumented = s.app.router
      .routes()
      .filter((r) => r.api !== 'global')
      // Passed to the wiki's own rest.php unchanged: the wiki documents them.
      .filter((r) => !(r.api === 'rest.php/v1' && !r.route.spec))
      .filter((r) => !r.route.spec || !spec.paths[r.template.slice('/{domain}'.length)]?.[r.route.method.toLowerCase()])
      .map((r) => `${r.route.method} ${r.template}`);
    assert.deepEqual(undocumented, []);
  });

  it('declares only valid JSON Schema 2020-12, in every route\'s parameters and body and in every component (the router does not check them again)', async () => {
    const spec = (await request(`${s.base}/${s.domain}/v1/?spec`, { headers: admin })).json;
    const invalid: string[] = [];
    const check = (where: string, schema: unknown) => {
      if (schema !== undefined && !ajv.validateSchema(schema as Schema)) invalid.push(`${where}: ${ajv.errorsText(ajv.errors)}`);
    };
    for (const [name, schema] of Object.entries((spec.components?.schemas ?? {}) as Record<string, Schema>)) check(`component ${name}`, schema);
    let checked = 0;
    for (const [route, methods] of Object.entries(spec.paths as Record<string, Record<string, any>>)) {
      for (const [method, operation] of Object.entries(methods)) {
        for (const parameter of (operation.parameters ?? []) as Parameter[]) check(`${method} ${route} ${parameter.name}`, parameter.schema);
        for (const [type, content] of Object.entries((operation.requestBody?.content ?? {}) as Record<string, { schema?: Schema }>)) check(`${method} ${route} body ${type}`, content.schema);
        checked++;
      }
    }
    assert.ok(checked > 50, `only ${checked} operations documented`);
    // A schema that is not JSON Schema is refused: the check can fail.
    assert.equal(ajv.validateSchema({ type: 'strnig' }), false);
    assert.deepEqual(invalid, []);
  });

  it('refuses a query parameter a route does not declare, on every route but rest_v1\'s and rest.php\'s, which ignore it as RESTBase and MediaWiki do', async () => {
    let checked = 0;
    let ignored = 0;
    for (const { route, template, api } of routesWithSpecs()) {
      const res = await request(`${s.base}${fill(template)}?undeclared_filter=1`, { method: route.method, headers: admin });
      if (api === 'rest_v1' || api === 'rest.php/v1') {
        assert.doesNotMatch(String(res.json?.detail ?? ''), /undeclared_filter/, `${route.method} ${template} ignores it`);
        ignored++;
        continue;
      }
      assert.equal(res.status, 400, `${route.method} ${template}: ${res.status} ${res.text.slice(0, 200)}`);
      assert.equal(res.json.type, problemType(template));
      assert.match(detailOf(res.json), /undeclared_filter/);
      checked++;
    }
    assert.ok(checked >= 25, `${checked} routes checked`);
    assert.ok(ignored >= 8, `${ignored} rest_v1 routes checked`);
  });

  it('reads flags as clients write them (true/false/1/0/yes/no/on/off) and refuses any other value naming the parameter', async () => {
    let checked = 0;
    for (const { route, template } of routesWithSpecs()) {
      for (const param of (route.spec!.parameters as Parameter[] | undefined) ?? []) {
        if (param.in !== 'query' || param.schema?.type !== 'boolean') continue;
        for (const word of ['1', 'no', 'YES', 'off']) {
          const res = await request(`${s.base}${fill(template)}?${param.name}=${word}`, { method: route.method, headers: admin });
          assert.doesNotMatch(String(res.json?.detail ?? ''), new RegExp(`'${param.name}'`), `${template}?${param.name}=${word}: ${res.text.slice(0, 200)}`);
        }
        const bad = await request(`${s.base}${fill(template)}?${param.name}=perhaps`, { method: route.method, headers: admin });
        assert.equal(bad.status, 400, `${template}?${param.name}=perhaps`);
        assert.match(bad.json.detail, new RegExp(`'${param.name}'`));
        checked++;
      }
    }
    assert.ok(checked >= 5, `${checked} flags checked`);
  });

  it('refuses path and query values that violate their declared schemas, on every route', async () => {
    let checked = 0;
    for (const { route, template } of routesWithSpecs()) {
      for (const param of (route.spec!.parameters as Parameter[] | undefined) ?? []) {
        if (!param.schema || (param.in !== 'path' && param.in !== 'query')) continue;
        const bad = violating(param.schema);
        if (bad === undefined) continue;
        const uri = param.in === 'path' ? fill(template, { [param.name]: bad }) : `${fill(template)}?${param.name}=${encodeURIComponent(bad)}`;
        const res = await request(`${s.base}${uri}`, { method: route.method, headers: admin });
        assert.equal(res.status, 400, `${route.method} ${template} with ${param.in} ${param.name}=${JSON.stringify(bad.slice(0, 20))}: ${res.status} ${res.text.slice(0, 200)}`);
        assert.match(detailOf(res.json), new RegExp(`'${param.name}'`), detailOf(res.json));
        checked++;
      }
    }
    assert.ok(checked >= 30, `${checked} parameters checked`);
  });

  it('refuses JSON bodies that violate their declared schemas, naming the field', async () => {
    let checked = 0;
    for (const { route, template } of routesWithSpecs()) {
      const body = (route.spec!.requestBody as { content?: Record<string, { schema?: Schema }> } | undefined)?.content?.['application/json']?.schema;
      if (!body || (route.body !== 'json' && route.body !== 'optional-json' && route.body !== 'form')) continue;
      const res = await request(`${s.base}${fill(template)}`, { method: route.method, headers: { ...admin, 'content-type': 'application/json' }, body: '["not", "an", "object"]' });
      assert.equal(res.status, 400, `${route.method} ${template}: ${res.status} ${res.text.slice(0, 200)}`);
      assert.equal(typeOf(res.json), problemType(template));
      checked++;
    }
    assert.ok(checked >= 6, `${checked} bodies checked`);
    // Form fields are text, typed by the same schema.
    const form = await request(`${s.base}/${s.domain}/v1/page/Bodmin`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'wikitext=x&base_revid=seven',
    });
    assert.equal(form.status, 400);
    assert.match(form.json.detail, /base_revid/);
    const badLimit = await request(`${s.base}/${s.domain}/sys/table/t/_query`, { method: 'POST', headers: admin, body: { limit: 5000 } });
    assert.equal(badLimit.status, 400);
    assert.match(badLimit.json.detail, /limit/);
  });

  it('leaves no hand-written copy of what the schemas check', () => {
    const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../src/modules');
    const text = fs.readdirSync(src, { recursive: true })
      .filter((f) => String(f).endsWith('.ts'))
      .map((f) => fs.readFileSync(path.join(src, String(f)), 'utf8'))
      .join('\n');
    for (const gone of ['checkBucket', 'checkKey', 'checkProp', 'invalid-limit', "If-None-Match on a write must be '*'", 'limit must be a positive integer']) {
      assert.ok(!text.includes(gone), `${gone} is still in src/modules`);
    }
  });
});
