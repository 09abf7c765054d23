import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countedUnder, RateLimits } from '../../../../../src/modules/page/edit/rate-limits.js';


describe("a caller's writes counted as MediaWiki's rate limiter counts edits", () => {
  it('counts an anonymous caller by address and /24, and all anonymous callers together where the wiki says so', () => {
    const limits = { anon: { hits: 100, seconds: 60 }, ip: { hits: 8, seconds: 60 }, subnet: { hits: 50, seconds: 60 } };
    assert.deepEqual(countedUnder(null, '203.0.113.7', limits).map(([key, limit]) => [key, limit.hits]), [['anon', 100], ['ip:203.0.113.7', 8], ['subnet:203.0.113.0/24', 50]]);
    assert.deepEqual(countedUnder(null, '2001:db8:0:1::', { ip: limits.ip }).map(([key]) => key), ['ip:2001:db8:0:1::']);
  });

  it("counts an account under its newbie limit, else the most generous of user and its groups', and a caller the wiki exempts under nothing", () => {
    const user = { hits: 90, seconds: 60 };
    assert.deepEqual(countedUnder('Ann', '198.51.100.1', { user, sysop: { hits: 1000, seconds: 60 }, bot: { hits: 10, seconds: 60 } }), [['user:Ann', { hits: 1000, seconds: 60 }]]);
    assert.deepEqual(countedUnder('Bo', '198.51.100.1', { user, newbie: { hits: 8, seconds: 60 }, ip: { hits: 8, seconds: 60 } }), [['ip:198.51.100.1', { hits: 8, seconds: 60 }], ['user:Bo', { hits: 8, seconds: 60 }]]);
    assert.deepEqual(countedUnder('Cy', '198.51.100.1', {}), []);
  });
});

describe('writes limited in a sliding window', () => {
  const t0 = 1_800_000_000_000 - (1_800_000_000_000 % 60_000);
  const eight = [['ip:a', { hits: 8, seconds: 60 }]] as [string, { hits: number; seconds: number }][];

  it('takes the limit, answers the next with the seconds until one passes, and passes it then', () => {
    const limits = new RateLimits();
    for (let i = 0; i < 8; i++) assert.equal(limits.take('w', eight, t0 + i), undefined);
    // The eight of this window weigh on the next until an eighth of it has passed: 60 + 7.5 s.
    assert.equal(limits.take('w', eight, t0 + 10), 68);
    assert.ok(limits.take('w', eight, t0 + 60_000)! > 0, 'a new window does not forget the last at once');
    assert.equal(limits.take('w', eight, t0 + 67_500), undefined);
    assert.ok(limits.take('w', eight, t0 + 67_600)! > 0);
    assert.equal(limits.take('w', eight, t0 + 180_000), undefined);
  });

  it('keeps scopes and keys apart, and counts a refused action under none of its keys', () => {
    const limits = new RateLimits();
    const both = [['ip:a', { hits: 2, seconds: 60 }], ['user:U', { hits: 3, seconds: 60 }]] as [string, { hits: number; seconds: number }][];
    assert.equal(limits.take('w', both, t0), undefined);
    assert.equal(limits.take('w', both, t0), undefined);
    assert.ok(limits.take('w', both, t0), 'the address is spent');
    // The user's third write, from another address, passes: the refused one was not counted.
    assert.equal(limits.take('w', [['ip:b', { hits: 2, seconds: 60 }], both[1]!], t0), undefined);
    assert.ok(limits.take('w', [['ip:c', { hits: 2, seconds: 60 }], both[1]!], t0), 'and now the user is');
    assert.equal(limits.take('other', both, t0), undefined);
  });
});
