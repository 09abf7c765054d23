import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ClientAddress } from '../../../src/http/client-address.js';
import { StreamGate } from '../../../src/http/stream-gate.js';
import { HttpError } from '../../../src/util/errors.js';
import { parseProxy } from '../../../src/util/addresses.js';
import { staysUnderPassedRoutes } from '../../../src/surfaces/rest-php/pass-through.js';

describe('the client address passed on to the wiki', () => {
  const claims = () => ({
    'x-forwarded-for': '10.9.9.9', 'x-real-ip': '10.9.9.8', forwarded: 'for=10.9.9.7', 'client-ip': '10.9.9.6', 'true-client-ip': '10.9.9.5',
    'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https', accept: 'text/html',
  });

  it("keeps no client's claim when no proxy is trusted (the default): its own address alone", () => {
    const headers: Record<string, string> = claims();
    new ClientAddress().forward(headers, '203.0.113.4');
    assert.deepEqual(headers, { 'x-forwarded-for': '203.0.113.4', accept: 'text/html' });
  });

  it("keeps a trusted proxy's chain and its word on scheme and host, by address or CIDR, IPv4 mapped or not", () => {
    const trusted = new ClientAddress(['10.0.0.0/8', '2001:db8::/32', '192.0.2.7']);
    for (const peer of ['10.1.2.3', '::ffff:10.1.2.3', '2001:db8::9', '192.0.2.7']) {
      const headers: Record<string, string> = claims();
      trusted.forward(headers, peer);
      assert.equal(headers['x-forwarded-for'], `10.9.9.9, ${peer.replace('::ffff:', '')}`, peer);
      assert.equal(headers['x-forwarded-host'], 'evil.example');
      assert.equal(headers['x-real-ip'], undefined, 'X-Real-IP is never passed on');
      assert.equal(headers.forwarded, undefined);
    }
    const headers: Record<string, string> = claims();
    trusted.forward(headers, '192.0.2.8');
    assert.equal(headers['x-forwarded-for'], '192.0.2.8', 'a neighbour of a trusted address is not trusted');
    assert.equal(headers['x-forwarded-host'], undefined);
  });

  it("drops a trusted proxy's chain that is not addresses alone", () => {
    const headers: Record<string, string> = { 'x-forwarded-for': '10.9.9.9, admin' };
    new ClientAddress(['127.0.0.1']).forward(headers, '127.0.0.1');
    assert.equal(headers['x-forwarded-for'], '127.0.0.1');
  });

  it('refuses a trusted_proxies entry that is no address or range', () => {
    for (const bad of ['localhost', '10.0.0.0/33', '10.0.0.0/8/1', '::1/129', '10.0.0.0/x', '']) assert.throws(() => parseProxy(bad), /not an IP address|no valid prefix/, bad);
    assert.deepEqual(parseProxy('10.0.0.0/8'), { address: '10.0.0.0', prefix: 8, family: 'ipv4' });
  });
});

describe('who a client is, for its share of streams', () => {
  const fronted = new ClientAddress(['10.0.0.0/8']);
  const clientOf = (address: ClientAddress, claimed: string | undefined, peer: string) => {
    const headers: Record<string, string> = claimed === undefined ? {} : { 'x-forwarded-for': claimed };
    address.forward(headers, peer);
    return address.clientOf(headers['x-forwarded-for'], peer);
  };

  it('is the peer unless it is a trusted proxy: then the address that proxy saw, past every trusted hop', () => {
    assert.equal(clientOf(new ClientAddress(), '198.51.100.1', '203.0.113.4'), '203.0.113.4', "an untrusted peer's claim names no one");
    assert.equal(clientOf(fronted, '198.51.100.1', '203.0.113.4'), '203.0.113.4');
    assert.equal(clientOf(fronted, '198.51.100.1', '10.1.1.1'), '198.51.100.1');
    assert.equal(clientOf(fronted, '198.51.100.1, 10.2.2.2', '::ffff:10.1.1.1'), '198.51.100.1', 'two trusted hops');
    assert.equal(clientOf(fronted, '192.0.2.9, 198.51.100.1, 10.2.2.2', '10.1.1.1'), '198.51.100.1', 'what the client itself claimed is not believed');
    assert.equal(clientOf(fronted, undefined, '10.1.1.1'), '10.1.1.1', 'a trusted proxy that names no one is its own client');
  });

  it('is no outside client for a trusted proxy or this host asking for itself, and the same client as clientOf otherwise', () => {
    const outside = (address: ClientAddress, claimed: string | undefined, peer: string) => {
      const headers: Record<string, string> = claimed === undefined ? {} : { 'x-forwarded-for': claimed };
      address.forward(headers, peer);
      return address.outsideClientOf(headers['x-forwarded-for'], peer);
    };
    assert.equal(outside(fronted, undefined, '10.1.1.1'), undefined, 'a trusted host (the wiki) asking for itself');
    assert.equal(outside(new ClientAddress(), undefined, '127.0.0.1'), undefined, 'a process on this host');
    assert.equal(outside(new ClientAddress(), undefined, '::1'), undefined);
    assert.equal(outside(new ClientAddress(), '198.51.100.1', '127.0.0.1'), undefined, 'an untrusted local front names no one: its own request');
    assert.equal(outside(fronted, '198.51.100.1', '10.1.1.1'), '198.51.100.1', 'a client a trusted front names');
    assert.equal(outside(new ClientAddress(['127.0.0.1']), '198.51.100.1', '127.0.0.1'), '198.51.100.1');
    assert.equal(outside(fronted, undefined, '203.0.113.4'), '203.0.113.4', 'a client on its own');
    assert.equal(outside(new ClientAddress(), '192.0.2.1', '2001:db8:0:1::5'), '2001:db8:0:1::/64');
  });

  it('takes an IPv6 client by its /64, however the address is written', () => {
    const v6 = new ClientAddress();
    assert.equal(clientOf(v6, undefined, '2001:db8:0:1::5'), '2001:db8:0:1::/64');
    assert.equal(clientOf(v6, undefined, '2001:0db8:0000:0001:ffff:1:2:3'), '2001:db8:0:1::/64');
    assert.equal(clientOf(v6, undefined, '2001:db8::1'), '2001:db8:0:0::/64');
    assert.equal(clientOf(v6, undefined, '::1'), '0:0:0:0::/64');
    assert.notEqual(clientOf(v6, undefined, '2001:db8:0:2::5'), clientOf(v6, undefined, '2001:db8:0:1::5'));
  });

  it('holds each client to its share and all to the total, giving a place back once however often it is released', () => {
    const gate = new StreamGate(2, 3);
    const a1 = gate.take('a');
    const a2 = gate.take('a');
    assert.equal(typeof a1, 'function');
    assert.equal(typeof a2, 'function');
    const a3 = gate.take('a');
    assert.ok(a3 instanceof HttpError && a3.status === 429 && a3.headers['retry-after'], 'a third from the same client');
    const b1 = gate.take('b');
    assert.equal(typeof b1, 'function', 'another client has its own share');
    const b2 = gate.take('b');
    assert.ok(b2 instanceof HttpError && b2.status === 503, 'past the total');
    assert.equal(gate.size, 3);
    (a1 as () => void)();
    (a1 as () => void)();
    assert.equal(gate.size, 2, 'released once');
    assert.equal(typeof gate.take('b'), 'function');
    assert.ok(gate.take('a') instanceof HttpError, 'the total again, not a share counted twice free');
  });
});

describe('paths passed to the wiki', () => {
  it('stay under page/, revision/ and transform/ however a server decodes them', () => {
    for (const path of [
      '/v1/page/%2F/..%2F..%2F..%2Fapi.php', '/v1/revision//..%2F..%2F..%2Fapi.php', '/v1/page/../../api.php', '/v1/page/%2e%2e/%2e%2e/x',
      '/v1/page/a%5C..%5C..%5Capi.php', '/v1/page/a\\..\\..\\api.php', '/v1/page/%252e%252e/%252e%252e/x', '/v1/page/%25252e%25252e%25252fx/..',
      '/v1/page/%c0%ae%c0%ae/x', '/v1/page/%ff', '/v1/page/a%00b', '/v1/transform/..', '/v1/page/.', '/v1/search/page', '/v2/page/x', '/v1/pagex/y',
      '/v1/page/%2F..%2F..%2Fsearch?q=x', '/../v1/page/x',
    ]) assert.equal(staysUnderPassedRoutes(path), false, path);
    for (const path of ['/v1/page/Main_Page/history', '/v1/page/Sub%2Fpage/links/language', '/v1/page/...', '/v1/page/a..b/history', '/v1/revision/12/compare/13',
      '/v1/transform/wikitext/to/lint', '/v1/page/%C3%A9t%C3%A9/history?x=../..', '/v1/page']) {
      assert.equal(staysUnderPassedRoutes(path), true, path);
    }
  });
});
