import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HttpError } from '../../../../../src/util/errors.js';
import { countedUnder, WriteLimits } from '../../../../../src/modules/page/drafts/write-limits.js';

const refusal = (fn: () => void): HttpError => {
  try {
    fn();
  } catch (e) {
    if (e instanceof HttpError) return e;
    throw e;
  }
  throw new Error('not refused');
};

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

  it('takes the limit, refuses the next with the seconds until one passes, and passes it then', () => {
    const limits = new WriteLimits();
    for (let i = 0; i < 8; i++) limits.take('w', eight, t0 + i);
    const refused = refusal(() => limits.take('w', eight, t0 + 10));
    assert.equal(refused.status, 429);
    assert.equal(refused.problemType, 'urn:problem:rate-limited');
    // The eight of this window weigh on the next until an eighth of it has passed: 60 + 7.5 s.
    assert.equal(refused.headers['retry-after'], '68');
    assert.equal(refusal(() => limits.take('w', eight, t0 + 60_000)).status, 429, 'a new window does not forget the last at once');
    limits.take('w', eight, t0 + 67_500);
    assert.equal(refusal(() => limits.take('w', eight, t0 + 67_600)).status, 429);
    limits.take('w', eight, t0 + 180_000);
  });

  it('keeps wikis and keys apart, and counts a refused write under none of its keys', () => {
    const limits = new WriteLimits();
    const both = [['ip:a', { hits: 2, seconds: 60 }], ['user:U', { hits: 3, seconds: 60 }]] as [string, { hits: number; seconds: number }][];
    limits.take('w', both, t0);
    limits.take('w', both, t0);
    assert.equal(refusal(() => limits.take('w', both, t0)).status, 429, 'the address is spent');
    // The user's third write, from another address, passes: the refused one was not counted.
    limits.take('w', [['ip:b', { hits: 2, seconds: 60 }], both[1]!], t0);
    assert.equal(refusal(() => limits.take('w', [['ip:c', { hits: 2, seconds: 60 }], both[1]!], t0)).status, 429, 'and now the user is');
    limits.take('other', both, t0);
  });
});
