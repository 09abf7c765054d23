import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WikiCallers } from '../../../../../src/modules/page/edit/wiki-callers.js';
import type { Credentials } from '../../../../../src/upstream/action-api.js';
import type { Wiki } from '../../../../../src/upstream/wiki.js';

/** A wiki that knows one session (`session=good`) and answers any other as anonymous; its userinfo requests counted. */
function fakeWiki() {
  const asked: Credentials[] = [];
  const wiki = {
    api: {
      userInfo: async (credentials: Credentials) => {
        asked.push(credentials);
        const known = credentials.cookie === 'session=good';
        return { id: known ? 7 : 0, name: known ? 'Editor' : '203.0.113.9', anon: !known, rateLimits: {}, rights: ['edit'], blocked: false };
      },
    },
  } as unknown as Wiki;
  return { asked, callers: new WikiCallers(() => wiki) };
}

describe("the wiki's callers", () => {
  it('asks the wiki of at most 8 new sessions of one address at once: a burst sent together is refused past that', async () => {
    const { asked, callers } = fakeWiki();
    const tries = Array.from({ length: 20 }, (_, i) => {
      try {
        return callers.whoIs('w', { cookie: `session=burst-${i}` }, '198.51.100.70').who.then(() => 'asked');
      } catch (e) {
        assert.equal((e as { status: number }).status, 429);
        assert.equal((e as { headers: Record<string, string> }).headers['retry-after'], '1');
        return 'refused';
      }
    });
    const outcomes = await Promise.all(tries);
    assert.equal(outcomes.filter((o) => o === 'asked').length, 8);
    assert.equal(asked.length, 8);
    assert.equal((await callers.whoIs('w', { cookie: 'session=after-the-burst' }, '198.51.100.70').who).user, null, 'once answered, the next is asked');
  });

  it('asks the wiki once a minute per session, however often it comes', async () => {
    const { asked, callers } = fakeWiki();
    for (let i = 0; i < 5; i++) assert.equal((await callers.whoIs('w', { cookie: 'session=good' }, '198.51.100.1').who).user, 'Editor');
    assert.equal(asked.length, 1);
  });

  it("refuses an address's new sessions for a while once it brought many the wiki does not know, not its known ones, nor other addresses'", async () => {
    const { asked, callers } = fakeWiki();
    const attacker = '198.51.100.66';
    assert.equal((await callers.whoIs('w', { cookie: 'session=good' }, attacker).who).user, 'Editor', 'a real session first');
    let refused = 0;
    for (let i = 0; i < 80; i++) {
      try {
        assert.equal((await callers.whoIs('w', { cookie: `session=made-up-${i}` }, attacker).who).user, null);
      } catch (e) {
        assert.equal((e as { status: number }).status, 429);
        assert.ok(Number((e as { headers: Record<string, string> }).headers['retry-after']) >= 1);
        refused++;
      }
    }
    // Sixty made-up sessions a minute are asked of the wiki; the one past that is the last asked.
    assert.equal(asked.length, 1 + 61, `the wiki asked ${asked.length} times`);
    assert.equal(refused, 80 - 61);
    assert.equal((await callers.whoIs('w', { cookie: 'session=good' }, attacker).who).user, 'Editor', 'a session already known is still served');
    assert.equal((await callers.whoIs('w', { cookie: 'session=other-made-up' }, '198.51.100.67').who).user, null, 'another address is asked of the wiki');
    assert.equal((await callers.whoIs('v', { cookie: 'session=made-up-for-v' }, attacker).who).user, null, 'and so is another wiki');
    assert.equal((await callers.whoIs('w', {}, attacker).who).user, null, 'an anonymous caller (no session) is not refused');
  });
});
