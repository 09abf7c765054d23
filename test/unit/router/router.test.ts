import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { HttpError } from '../../../src/util/errors.js';
import { Router } from '../../../src/router/router.js';
import type { Module, RouteRequest } from '../../../src/router/types.js';

const log = pino({ level: 'silent' });

function makeRouter(modules: Module[]): Router {
  const router = new Router((d) => d === 'example.org');
  for (const m of modules) router.register(m);
  return router;
}

async function call(router: Router, method: string, uri: string, body?: unknown, external = true) {
  const ctx = router.context({ requestId: 'req-1', admin: false, log, external });
  return router.invoke(router.resolve(method, uri), { method, uri, body }, ctx);
}

const echo = (req: RouteRequest) => ({ status: 200, body: { params: req.params, query: Object.fromEntries(req.query) } });

describe('router', () => {
  const router = makeRouter([
    {
      name: 'things',
      api: 'v1',
      routes: [
        { method: 'GET', path: '/thing/{name}', handler: echo },
        { method: 'GET', path: '/thing/special', handler: () => ({ status: 200, body: 'static wins' }) },
        { method: 'GET', path: '/thing/{name}/{rev}', handler: echo },
        { method: 'PUT', path: '/thing/{name}', handler: () => ({ status: 201 }) },
        { method: 'GET', path: '/other/x', handler: () => ({ status: 200 }) },
      ],
    },
  ]);

  it('extracts and decodes path parameters, keeping %2F inside one parameter', async () => {
    const res = await call(router, 'GET', '/example.org/v1/thing/A%2FB%20c/42?x=1&y=%C3%BC');
    assert.deepEqual(res.body, { params: { domain: 'example.org', name: 'A/B c', rev: '42' }, query: { x: '1', y: 'ü' } });
  });

  it('prefers static segments over parameters', async () => {
    assert.equal((await call(router, 'GET', '/example.org/v1/thing/special')).body, 'static wins');
    assert.deepEqual((await call(router, 'GET', '/example.org/v1/thing/specials')).body, {
      params: { domain: 'example.org', name: 'specials' },
      query: {},
    });
  });

  it('lists the static children of a path with a trailing slash', async () => {
    assert.deepEqual((await call(router, 'GET', '/example.org/v1/')).body, { items: ['other', 'thing'] });
    assert.deepEqual((await call(router, 'GET', '/example.org/v1/other/')).body, { items: ['x'] });
  });

  it('answers 405 with Allow, 404 for unknown routes and domains, 400 for bad encodings', () => {
    assert.throws(() => router.resolve('DELETE', '/example.org/v1/thing/a'), (e: HttpError) => e.status === 405 && e.headers.allow === 'GET, PUT, HEAD');
    assert.throws(() => router.resolve('GET', '/example.org/v1/nothing'), (e: HttpError) => e.status === 404);
    assert.throws(() => router.resolve('GET', '/elsewhere.org/v1/thing/a'), (e: HttpError) => e.status === 404 && /Domain/.test(e.detail));
    assert.throws(() => router.resolve('GET', '/example.org/v1/thing/%E0%A4%A'), (e: HttpError) => e.status === 400);
    assert.throws(() => router.resolve('GET', 'example.org/v1/thing/a'), (e: HttpError) => e.status === 400);
  });

  it('serves HEAD with the GET handler', async () => {
    assert.equal((await call(router, 'HEAD', '/example.org/v1/thing/special')).body, 'static wins');
  });
});

describe('internal requests', () => {
  const seen: { depth: number; requestId: string; body: unknown }[] = [];
  const payload = { big: Buffer.alloc(10) };
  const router = makeRouter([
    {
      name: 'front',
      api: 'v1',
      routes: [
        {
          method: 'GET',
          path: '/front/{key}',
          handler: async (req, ctx) => {
            const res = await ctx.request({ method: 'put', uri: `/example.org/sys/store/${encodeURIComponent(req.params.key!)}`, body: payload });
            return { status: 200, body: { inner: res.body } };
          },
        },
        {
          method: 'GET',
          path: '/missing',
          handler: async (_req, ctx) => {
            try {
              await ctx.request({ method: 'GET', uri: '/example.org/sys/store/none/nested' });
              return { status: 200 };
            } catch (e) {
              return { status: 200, body: { caught: (e as HttpError).status } };
            }
          },
        },
        { method: 'GET', path: '/loop', handler: async (_req, ctx) => ctx.request({ method: 'GET', uri: '/example.org/v1/loop' }) },
      ],
    },
    {
      name: 'store',
      api: 'sys',
      routes: [
        {
          method: 'PUT',
          path: '/store/{key}',
          handler: (req, ctx) => {
            seen.push({ depth: (ctx as unknown as { depth: number }).depth, requestId: ctx.requestId, body: req.body });
            return { status: 201, body: { stored: req.params.key } };
          },
        },
      ],
    },
  ]);

  it('reach another module in-process, passing the body object itself, under the root request id', async () => {
    const res = await call(router, 'GET', '/example.org/v1/front/a%2Fb');
    assert.deepEqual(res.body, { inner: { stored: 'a/b' } });
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.body, payload, 'no serialisation: the same object arrives');
    assert.equal(seen[0]!.depth, 1);
    assert.equal(seen[0]!.requestId, 'req-1');
  });

  it('may call /sys/ without the admin credential, which outside callers need', async () => {
    await assert.rejects(call(router, 'PUT', '/example.org/sys/store/x'), (e: HttpError) => e.status === 403);
    assert.equal((await call(router, 'PUT', '/example.org/sys/store/x', undefined, false)).status, 201);
  });

  it('reject with the HttpError of a failed internal request', async () => {
    assert.deepEqual((await call(router, 'GET', '/example.org/v1/missing')).body, { caught: 404 });
  });

  it('stop infinite recursion with 508', async () => {
    await assert.rejects(call(router, 'GET', '/example.org/v1/loop'), (e: HttpError) => e.status === 508);
  });

  it('match a repeated URI as the first time: each body validated, each URI its own parameters and query', async () => {
    const checked = new Router((d) => d === 'example.org');
    checked.register({
      name: 'counter',
      api: 'sys',
      routes: [
        {
          method: 'POST',
          path: '/count/{name}',
          body: 'json',
          spec: { parameters: [{ name: 'by', in: 'query', schema: { type: 'integer' } }], requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } } } } },
          handler: (req) => ({ status: 200, body: { name: req.params.name, n: (req.body as { n: number }).n, by: req.query.get('by') } }),
        },
      ],
    });
    checked.compile({});
    const ctx = checked.context({ requestId: 'r', admin: false, log });
    const post = (uri: string, body: unknown) => ctx.request({ method: 'POST', uri, body });
    assert.deepEqual((await post('/example.org/sys/count/a', { n: 1 })).body, { name: 'a', n: 1, by: null });
    assert.deepEqual((await post('/example.org/sys/count/a', { n: 2 })).body, { name: 'a', n: 2, by: null });
    await assert.rejects(post('/example.org/sys/count/a', { n: 'three' }), (e: HttpError) => e.status === 400, 'the same URI again: its body is checked anew');
    assert.deepEqual((await post('/example.org/sys/count/b', { n: 4 })).body, { name: 'b', n: 4, by: null });
    assert.deepEqual((await post('/example.org/sys/count/a?by=5', { n: 5 })).body, { name: 'a', n: 5, by: '5' });
    assert.deepEqual((await post('/example.org/sys/count/a?by=6', { n: 6 })).body, { name: 'a', n: 6, by: '6' });
    await assert.rejects(post('/example.org/sys/count/a?by=x', { n: 7 }), (e: HttpError) => e.status === 400);
    const long = 'l'.repeat(1000);
    for (const n of [8, 9]) assert.deepEqual((await post(`/example.org/sys/count/${long}`, { n })).body, { name: long, n, by: null }, 'a long URI, matched each time');
  });
});
