import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import zlib from 'node:zlib';
import { v1 as uuidv1, v4 as uuidv4 } from 'uuid';
import { admin, BACKENDS, request, startServer, type HttpResult, type TestServer } from '../helpers.js';
import { WIKI_URL } from '../wiki.js';

/**
 * Seeded fuzzing of every route: hostile path parameters, query strings, headers and bodies, with
 * and without the admin credential. The service must answer each with a 4xx or a success; the only
 * 5xx allowed are gateway errors about the wiki. Reproduce a failure with FUZZ_SEED.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 3000);
const CONCURRENCY = 8;
const UPSTREAM_PROBLEMS = new Set(['urn:problem:upstream-error', 'urn:problem:upstream-unavailable', 'urn:problem:upstream-timeout']);

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Fuzzer {
  constructor(private readonly random: () => number) {}
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!;
  }
  chance(p: number): boolean {
    return this.random() < p;
  }
  int(max: number): number {
    return Math.floor(this.random() * max);
  }

  segment(name: string): string {
    const hostile = [
      '', 'toString', '__proto__', 'constructor', 'hasOwnProperty', 'xmin', 'ctid', 'A', 'a', '%00', '%2F..%2F', '..', '%E2%82', '%ZZ',
      'a'.repeat(3000), 'Ünïcödé_✓', 'Special:Random', 'Media:X.png', 'Talk:', ':', '%3Cscript%3E', 'null', '-1', '0', '1e5',
      '99999999999999999999', String(uuidv4()), uuidv1(), uuidv1({ msecs: Date.now() + 3e11, nsecs: 0 }), '2014-01-01T00:00:00Z',
      '20140101T20:23:22.100Z', '99999-01-01T00:00:00Z', 'html', 'data-parsoid', 'rev', 'wikitext', 'Bodmin', 'bodmin', 'Toronto',
      // Ways out of a pass-through prefix once a server in front of the wiki decodes the path.
      '%2F..%2F..%2F..%2Fapi.php', '%2F/..%2F..%2F..%2Fapi.php', '/..%2F..%2F..%2Fapi.php', '..%5C..%5C..%5Capi.php', '%252e%252e%252f%252e%252e%252fapi.php',
      '%c0%ae%c0%ae%2F%c0%ae%c0%ae%2Fapi.php', '%2e%2e/%2e%2e/%2e%2e/index.php', '%23x', '%23', 'A%23x',
    ];
    const valid: Record<string, string[]> = {
      table: ['fz', 'page_revisions', 'parsoid', 'site_info', 'key_value.kv'],
      bucket: ['kv', 'krv', 'ro', 'missing'],
      key: ['k1', 'k2'],
      name: ['obj'],
      prop: ['html', 'data-mw', 'p1'],
      title: ['Bodmin', 'No_such_page_fuzz'],
      revid: ['1', '2', '987654321'],
    };
    return this.chance(0.45) && valid[name] ? this.pick(valid[name]!) : this.pick(hostile);
  }

  query(): string {
    if (this.chance(0.5)) return '';
    const params = ['limit', 'next', 'ts', 'spec', 'doc', 'author', 'limit', 'namespace', 'prefix', 'next', 'action', 'meta'];
    const values = ['', '0', '-1', '5', '1000', '1e9', 'abc', 'eyJmIjoieCIsImsiOltdfQ', '%FF', '2014-01-01T00:00:00Z', 'x'.repeat(5000), '{"c":"abc"}',
      '1583-01-01T00:00Z', '1000-01-01T00:00:00Z', '|', '9999999999999', '4', 'query', 'userinfo', 'A', 'Talk:x', this.cursor()];
    return `?${Array.from({ length: 1 + this.int(3) }, () => `${this.pick(params)}=${encodeURIComponent(this.pick(values))}`).join('&')}`;
  }

  /** A paging cursor of the snapshot listing, forged: its moment, namespace, prefix and continuation each plausible or not. */
  cursor(): string {
    const at = this.pick<unknown>([8640000000000001, 1e300, -1e300, -12219292800001, 0, Date.now(), 'x', null, 1.5]);
    const ns = this.pick<unknown>([0, 4, 9999999999999, -1, 1.5, '0']);
    const cont = this.pick<unknown>([undefined, 'x', [], { gapcontinue: 'B', continue: 'gapcontinue||' }, { gaplimit: '1' }, { format: 'xml' },
      { gapcontinue: '|' }, { formatversion: '1', continue: 'gapcontinue||' }, { rvcontinue: 'x|y' }, { gapcontinue: 5 }]);
    const prefix = this.pick<unknown>([undefined, '|', 'A', 7]);
    return Buffer.from(JSON.stringify({ at, ns, ...(prefix === undefined ? {} : { prefix }), ...(cont === undefined ? {} : { cont }) })).toString('base64url');
  }

  json(depth = 0): unknown {
    const scalars = [null, true, false, 0, -1, 1.5, 1e308, -1e-308, 2 ** 53 + 1, '', 'x', 'toString', '1e999999999', 9e15, '2014-01-01T00:00:00Z', uuidv1(), 'AAAA', '\u0000', 1, 2, 3];
    if (depth > 3 || this.chance(0.4)) return this.pick(scalars);
    if (this.chance(0.3)) return Array.from({ length: this.int(4) }, () => this.json(depth + 1));
    const keys = ['attributes', 'index', 'table', 'if', 'proj', 'order', 'limit', 'next', 'distinct', 'secondaryIndexes', 'version', 'type', 'attribute',
      'revisionRetentionPolicy', 'toString', '__proto__', 'constructor', 'k', 'a', 'A', 'xmin', 'eq', 'between', 'gt', '_ttl', 'options', 'base_revid', 'wikitext'];
    return Object.fromEntries(Array.from({ length: this.int(5) }, () => [this.pick(keys), this.json(depth + 1)]));
  }

  /** Plausible table-API bodies, so fuzzing reaches past the first check. */
  shaped(): unknown {
    const types = ['string', 'int', 'varint', 'decimal', 'timestamp', 'blob', 'json', 'set<int>', 'set<decimal>', 'timeuuid', 'bogus'];
    const names = ['k', 'r', 'v', 'toString', 'A', 'a', 'xmin', 'constructor'];
    const attributes = Object.fromEntries(names.filter(() => this.chance(0.5)).map((n) => [n, this.pick(types)]));
    return this.pick([
      { attributes: { k: 'string', ...attributes }, index: [{ attribute: this.pick(names), type: this.pick(['hash', 'range', 'static']) }, { attribute: 'k', type: 'hash' }] },
      { attributes: { k: this.json(2), r: this.json(2), v: this.json(2) } },
      { attributes: { k: 'x', r: this.pick(['1e999999999', '9', '10', 9e15, -5]) }, if: this.pick<unknown>(['not exists', { v: { eq: this.json(3) } }, { toString: { eq: 1 } }]) },
      { attributes: { k: 'x' }, index: this.pick(['toString', 'by_v', '__proto__']), order: { r: this.pick(['asc', 'desc', 'sideways']) }, limit: this.pick([0, 1, 1e9, 'x']) },
      { revisionRetentionPolicy: { type: this.pick(['latest', 'latest_hash', 'interval', 'ttl', 'x']), count: this.pick([0, 1, -1, 'x']) } },
      // A branch on a base revision of another page, or of none.
      { wikitext: 'Draft.', base_revid: this.pick([1, 2, 3, 987654321, 0]) },
      // Change notices as the wiki's extension and EventBus send them.
      this.notice(),
    ]);
  }

  notice(): unknown {
    const one = () => ({
      $schema: '/mediawiki/page/change/1.1.0', meta: { domain: this.pick([DOMAIN, 'other.test', 7]) }, page_change_kind: this.pick(['edit', 'create', 'delete', 'move', 'visibility_change', 'x', null]),
      page: { page_title: this.pick(['Bodmin', '%23x', '#x', '', 'a'.repeat(300), 7, null]), namespace_id: this.pick([0, -1, 9999999999999, 'x']) },
      revision: { rev_id: this.pick([1, 2, -1, 1e300, 'x', null]) }, prior_state: this.pick([undefined, { page: { page_title: this.pick(['Bodmin', '', null]) } }]),
      dt: this.pick(['2014-01-01T00:00:00Z', '1000-01-01T00:00:00Z', 'x']),
    });
    return this.chance(0.5) ? one() : Array.from({ length: this.int(4) }, one);
  }

  body(): { body?: Buffer | string; headers: Record<string, string> } {
    const kind = this.int(10);
    const type = this.pick(['application/json', 'application/json; charset=utf-8', 'text/plain', 'application/octet-stream', 'multipart/form-data; boundary=x', '']);
    const headers: Record<string, string> = type ? { 'content-type': type } : {};
    switch (kind) {
      case 0:
        return { headers };
      case 1:
        return { body: '['.repeat(100_000) + ']'.repeat(100_000), headers: { 'content-type': 'application/json' } };
      case 2:
        return { body: `{"a":${'['.repeat(50)}`, headers: { 'content-type': 'application/json' } };
      case 3:
        return { body: Buffer.from(Array.from({ length: 64 }, () => this.int(256))), headers: { ...headers, 'content-encoding': this.pick(['gzip', 'br', 'identity']) } };
      case 4:
        return { body: zlib.gzipSync(JSON.stringify(this.json())), headers: { ...headers, 'content-encoding': 'gzip' } };
      case 5:
        return { body: Buffer.alloc(2 * 1024 * 1024, 'x'), headers };
      case 6:
      case 7:
        return { body: JSON.stringify(this.shaped()), headers: { 'content-type': 'application/json' } };
      default:
        return { body: JSON.stringify(this.json()), headers };
    }
  }
}

/** Paths whose parameters are checked before the wiki is asked: a wiki's refusal (upstream-error) is the service's fault there. */
const CHECKED_FIRST = [/\/v1\/snapshot\//, /\/rest\.php\/v1\/page\/[^/]*(\/(bare|html|with_html))?(\?|$)/];

function check(res: HttpResult, what: string): string | undefined {
  if (/"userinfo"|"batchcomplete"/.test(res.text)) return `${what}: answered by the wiki's Action API: ${res.text.slice(0, 200)}`;
  if (res.status < 500) return undefined;
  const key = res.json?.errorKey ?? String(res.json?.type ?? '').replace(/^urn:problem:/, '');
  if (key === 'upstream-error' && CHECKED_FIRST.some((p) => p.test(what))) return `${what}: the wiki refused what the service sent: ${res.text.slice(0, 300)}`;
  // MediaWiki's REST API answers in its own shape: the service's errors name their kind as
  // `errorKey`; a 5xx without one is the wiki's own, passed on unchanged.
  if (what.includes('/rest.php/') && res.json?.httpCode === res.status) {
    const key = res.json.errorKey as string | undefined;
    return key === undefined || UPSTREAM_PROBLEMS.has(`urn:problem:${key}`) ? undefined : `${what}: ${res.status} ${res.text.slice(0, 300)}`;
  }
  if (res.headers['content-type'] !== 'application/problem+json') return `${what}: ${res.status} without problem+json`;
  if (UPSTREAM_PROBLEMS.has(res.json?.type)) return undefined;
  return `${what}: ${res.status} ${res.text.slice(0, 300)}`;
}

/** A domain of its own: the storage of the other backends is shared with other tests' `wiki.test`. */
const DOMAIN = 'fuzz.wiki.test';
const NOTICE_SECRET = 'fuzz-notice-secret-0123456789';

for (const backend of BACKENDS) {
  describe(`fuzzing every route: ${backend.name}`, () => {
    let s: TestServer;
    before(async () => {
      s = await startServer({
        storage: backend.storage(),
        max_body_bytes: 1024 * 1024,
        wikis: { [DOMAIN]: { action_api: `${WIKI_URL}/api.php`, rest_api: `${WIKI_URL}/rest.php`, notice_secret: NOTICE_SECRET } },
      });
      const sys = `${s.base}/${DOMAIN}/sys`;
      for (const [path, body] of [
        ['/table/fz', { attributes: { k: 'string', r: 'decimal', v: 'string' }, index: [{ attribute: 'k', type: 'hash' }, { attribute: 'r', type: 'range' }], secondaryIndexes: { by_v: [{ attribute: 'v', type: 'hash' }] } }],
        ['/key_value/kv', undefined],
        ['/key_rev_value/krv', undefined],
        ['/revisioned_object/ro', undefined],
      ] as const) {
        assert.ok([200, 201].includes((await request(`${sys}${path}`, { method: 'PUT', headers: admin, body })).status), path);
      }
    });
    after(() => s.close());

    it(`answers ${REQUESTS} hostile requests without a 5xx of its own, and keeps serving`, async (t) => {
      const fuzz = new Fuzzer(mulberry32(SEED + backend.name.length));
      // A stream of events never ends: it is fuzzed below by its status alone, not read to its end.
      // (Every route of its path: another method picked at random would reach it.)
      const all = s.app.router.routes();
      // (Server-Sent Events, and Enterprise's Realtime records a line.)
      const streams = (r: (typeof all)[number]) => {
        const content = (r.route.spec as { responses?: Record<number, { content?: Record<string, unknown> }> } | undefined)?.responses?.[200]?.content;
        return !!(content?.['text/event-stream'] || content?.['application/x-ndjson']);
      };
      const streamPaths = new Set(all.filter(streams).map((r) => r.template));
      // The notice intake shares the change stream's path: fuzzed by its own method only.
      const routes = all.filter((r) => (r.api !== 'global' || r.route.path !== '/metrics') && !(streamPaths.has(r.template) && (streams(r) || ['GET', 'HEAD'].includes(r.route.method))));
      const failures: string[] = [];
      const statuses = new Map<number, number>();
      let sent = 0;
      const worker = async () => {
        while (sent < REQUESTS) {
          sent++;
          const entry = fuzz.pick(routes);
          const path = entry.template.replace(/\{(\w+)\}/g, (_, name: string) => (name === 'domain' ? (fuzz.chance(0.95) ? DOMAIN : fuzz.segment(name)) : encodeURI(fuzz.segment(name)).replace(/%25/g, '%')));
          const method = fuzz.chance(0.75) || streamPaths.has(entry.template) ? entry.route.method : fuzz.pick(['GET', 'HEAD', 'PUT', 'POST', 'DELETE', 'PATCH', 'OPTIONS']);
          const { body, headers } = fuzz.body();
          if (fuzz.chance(0.6)) Object.assign(headers, admin);
          if (fuzz.chance(0.2)) headers['if-match'] = fuzz.pick(['*', '"x"', `"${uuidv1()}"`, 'W/"1/2"']);
          if (fuzz.chance(0.2)) headers['if-none-match'] = fuzz.pick(['*', '"x"', 'garbage']);
          if (fuzz.chance(0.3)) headers['accept-encoding'] = fuzz.pick(['gzip', 'br', 'identity', 'gzip;q=0', '*;q=0', 'x']);
          if (fuzz.chance(0.1)) headers['cache-control'] = 'no-cache';
          const query = fuzz.query();
          // The notice intake past its secret, often (the secret grants nothing but notices).
          const uri = streamPaths.has(entry.template) && fuzz.chance(0.7) ? `${path}${query || '?'}&secret=${NOTICE_SECRET}` : `${path}${query}`;
          let res: HttpResult;
          try {
            res = await request(`${s.base}${uri}`, { method, headers, body });
          } catch (e) {
            // The server may close a connection it refuses to read a huge body from; it must still be up.
            if (!(body && Buffer.byteLength(body) > 1024 * 1024)) failures.push(`${method} ${uri.slice(0, 200)} ${JSON.stringify(headers)} body ${body ? Buffer.byteLength(body) : 0}: ${(e as Error).message}`);
            continue;
          }
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          const failure = check(res, `${method} ${uri.slice(0, 200)}`);
          if (failure) failures.push(failure);
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      // Routes whose parameters go on to the wiki, fuzzed on their own as well: the snapshot
      // listing (forged cursors, moments, namespaces, prefixes) and branches on another page's base.
      const focused = [
        ...Array.from({ length: 120 }, () => ({ method: 'GET', uri: `/${DOMAIN}/v1/snapshot/?limit=${1 + fuzz.int(3)}&${Array.from({ length: 1 + fuzz.int(2) }, () => `${fuzz.pick(['next', 'next', 'ts', 'namespace', 'prefix'])}=${encodeURIComponent(fuzz.pick([
          fuzz.cursor(), fuzz.cursor(), '1583-01-01T00:00Z', '1000-01-01T00:00:00Z', '|', '9999999999999', '-1', '4', 'A', '%ZZ', '[', '2014-01-01T00:00:00Z']))}`).join('&')}`, body: undefined })),
        ...Array.from({ length: 30 }, () => ({ method: 'POST', uri: `/${DOMAIN}/v1/page/${fuzz.pick(['Bodmin', 'Toronto', '%23x'])}/branches/`, body: JSON.stringify({ wikitext: 'Draft.', base_revid: fuzz.pick([1, 2, 3, 987654321]) }) })),
      ];
      for (const { method, uri, body } of focused) {
        const res = await request(`${s.base}${uri}`, { method, body, headers: body ? { 'content-type': 'application/json' } : {} });
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        const failure = check(res, `${method} ${uri.slice(0, 300)}`);
        if (failure) failures.push(failure);
      }

      // The streams: a 4xx for a start it cannot take, else a stream that stays open.
      const starts = Array.from({ length: 60 }, () => {
        const since = fuzz.pick(['', 'x', '-1', '0,4', '2014-01-01T00:00:00Z', uuidv1(), 'a'.repeat(3000), '%ZZ', 'html', '1000-01-01T00:00:00Z', '1582-10-14T23:59:59Z',
          '0001-01-01T00:00:00Z', '2020-13-45T00:00:00Z', '9999-01-01T00:00:00Z', '+275760-09-13T00:00:00Z']);
        const query = `?${fuzz.pick(['since', 'since', 'namespace', 'prefix', 'include'])}=${encodeURIComponent(since)}`;
        const headers: Record<string, string> = fuzz.chance(0.5) ? { 'last-event-id': fuzz.pick(['', 'garbage', uuidv1(), String(uuidv4()), '..%00', '1000-01-01T00:00:00Z', '1582-01-01T00:00:00Z']) } : {};
        return { query, headers };
      });
      // Enterprise's Realtime: its parameters in a body (on a GET too, as its SDK sends them) or the query.
      const realtimeStarts = Array.from({ length: 40 }, () => {
        const value = fuzz.pick<unknown>(['', 'x', -1, 9e15, [0], [10], { 0: 'x' }, { 0: -5 }, { 0: 1e300 }, '2014-01-01T00:00:00Z', '1000-01-01T00:00:00Z', '9999-01-01T00:00:00Z', ['name', 'nope'], [{ field: 'namespace.identifier', value: 0 }], null, 'a'.repeat(3000)]);
        const body = fuzz.chance(0.8) ? JSON.stringify({ [fuzz.pick(['since', 'fields', 'filters', 'parts', 'offsets', 'since_per_partition', 'limit'])]: value }) : fuzz.pick(['', '{', '[]', 'null', '"x"']);
        return { method: fuzz.pick(['GET', 'POST']), body };
      });
      const opened = (method: string, path: string, headers: Record<string, string>, body?: string) => new Promise<{ status: number; type: string; dropped: boolean }>((resolve, reject) => {
        const req = http.request(`${s.base}${path}`, { method, headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } : {}) } }, (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            return resolve({ status: res.statusCode!, type: String(res.headers['content-type']), dropped: false });
          }
          // A stream the service drops at once (a start it could not read) is a failure, not a 200.
          const watch = setTimeout(() => {
            resolve({ status: 200, type: String(res.headers['content-type']), dropped: false });
            req.destroy();
          }, 300);
          res.resume();
          res.on('close', () => {
            clearTimeout(watch);
            resolve({ status: 200, type: String(res.headers['content-type']), dropped: true });
          });
        });
        req.on('error', reject);
        req.end(body);
      }).catch((e: Error) => ({ status: 0, type: e.message, dropped: false }));
      const failed = (what: string, status: { status: number; type: string; dropped: boolean }) => {
        if (status.status === 0 || status.status >= 500 || status.dropped) failures.push(`${what}: ${status.status} ${status.type}${status.dropped ? ' dropped at once' : ''}`);
      };
      await Promise.all([
        ...starts.map(async ({ query, headers }) => failed(`GET /v1/changes${query.slice(0, 100)} ${JSON.stringify(headers)}`, await opened('GET', `/${DOMAIN}/v1/changes${query}`, headers))),
        ...realtimeStarts.map(async ({ method, body }) => failed(`${method} /enterprise/v2/articles ${body.slice(0, 100)}`, await opened(method, `/${DOMAIN}/enterprise/v2/articles`, {}, body))),
      ]);
      t.diagnostic(`statuses: ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`);
      assert.deepEqual(failures, []);

      assert.equal((await request(`${s.base}/_health`)).status, 200, 'the process is still up');
      const value = `after fuzzing ${backend.name}`;
      await request(`${s.base}/${DOMAIN}/sys/key_value/after`, { method: 'PUT', headers: admin });
      assert.equal((await request(`${s.base}/${DOMAIN}/sys/key_value/after/k`, { method: 'PUT', headers: { ...admin, 'content-type': 'text/plain' }, body: value })).status, 201);
      assert.equal((await request(`${s.base}/${DOMAIN}/sys/key_value/after/k`, { headers: admin })).text, value, 'and answers correctly');
      assert.equal((await request(`${s.base}/${DOMAIN}/v1/page/Bodmin/html`)).status, 200);
    });
  });
}
