import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { relativeLocation } from '../../../src/http/relative-location.js';

/** Resolves as a client does, against the URL it asked for behind a proxy's prefix. */
const behindPrefix = (requestPath: string, location: string) => {
  const prefixed = requestPath.replace(/^\/wiki\.test\/rest_v1\//, '/api/rest_v1/');
  return new URL(relativeLocation(requestPath, location), `https://wiki.example${prefixed}`).pathname;
};

describe('Location headers relative to the request', () => {
  it('resolve to the same URL as the absolute path they replace, and under a proxy prefix to the prefixed one', () => {
    const cases: [string, string][] = [
      ['/wiki.test/v1/page/bodmin%20/html', '/wiki.test/v1/page/Bodmin/html?ts=2020-01-01T00:00:00Z'],
      ['/wiki.test/v1/page/Old/html/12', '/wiki.test/v1/page/Talk:New/html/12'],
      ['/wiki.test/v1/page/', '/wiki.test/v1/page/'],
      ['/wiki.test/v1/page/A/html', '/wiki.test/v1/'],
      ['/wiki.test/rest_v1/page/html/Old', '/wiki.test/rest_v1/page/html/Talk:New?redirect=false'],
      ['/wiki.test/v1/page/A/html/12', '/wiki.test/v1/page/A/html/dc12b7bf-f247-11f1-a70a-a7d1f3db3625'],
      ['/wiki.test/v1/page/A/html/12', '/wiki.test/v1/page/A/html/'],
      ['/wiki.test/v1/page/A', '/wiki.test/v1/page/B/html'],
    ];
    for (const [from, to] of cases) {
      const relative = relativeLocation(from, to);
      assert.ok(!relative.startsWith('/'), relative);
      const u = new URL(relative, `http://service${from}`);
      assert.equal(u.pathname + u.search, to, `${from} → ${relative}`);
    }
    assert.equal(behindPrefix('/wiki.test/rest_v1/page/html/Old', '/wiki.test/rest_v1/page/html/New'), '/api/rest_v1/page/html/New');
    assert.equal(relativeLocation('/wiki.test/v1/page/A/html', '/wiki.test/v1/page/Talk:B'), '../Talk:B', 'a colon after ../ cannot read as a scheme');
    assert.equal(relativeLocation('/wiki.test/v1/page/A', '/wiki.test/v1/page/Talk:B'), './Talk:B');
    assert.equal(relativeLocation('/wiki.test/v1/page/A/html/12', '/wiki.test/v1/page/A/html/3f1c?x=1'), '3f1c?x=1', 'a URL in the same folder is its last segment');
    assert.equal(relativeLocation('/wiki.test/v1/page/A/html/12', '/wiki.test/v1/page/A/html/'), './');
  });

  it('leaves absolute URLs and paths outside the domain alone', () => {
    assert.equal(relativeLocation('/wiki.test/v1/page/A', 'https://elsewhere.example/x'), 'https://elsewhere.example/x');
    assert.equal(relativeLocation('/wiki.test/sys/key_value/kv/k', '/elsewhere'), '/elsewhere');
    assert.equal(relativeLocation('/wiki.test/v1/page/A', '//cdn.example/x'), '//cdn.example/x');
    assert.equal(relativeLocation('/x', '/y'), '/y', 'a path with no domain of its own to be relative to');
  });
});
