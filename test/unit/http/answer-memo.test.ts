import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AnswerMemo, type MemoEntry } from '../../../src/http/answer-memo.js';

const entry = (reuse: MemoEntry['reuse']): MemoEntry => ({ status: 200, headers: ['etag', '"1"', 'x-request-id', ''], body: Buffer.from('x'), label: '/r', reuse });

describe('the answer memo', () => {
  it('keys GETs and HEADs alike by URI, credential, Accept and Accept-Encoding', () => {
    const key = (method: string, admin: boolean, headers: Record<string, string>) => AnswerMemo.keyOf(method, '/a?b=1', admin, headers);
    assert.equal(key('GET', false, {}), key('HEAD', false, {}));
    assert.notEqual(key('GET', false, {}), key('GET', true, {}));
    assert.notEqual(key('GET', false, { accept: 'text/html' }), key('GET', false, {}));
    assert.notEqual(key('GET', false, { 'accept-encoding': 'gzip' }), key('GET', false, {}));
    assert.notEqual(AnswerMemo.keyOf('GET', '/a', false, {}), key('GET', false, {}));
  });

  it('sends writes, conditional requests, forced refreshes and requests with a body the full way', () => {
    assert.equal(AnswerMemo.keyOf('PUT', '/a', false, {}), undefined);
    assert.equal(AnswerMemo.keyOf('GET', `/a?x=${'y'.repeat(2000)}`, false, {}), undefined, 'a key of kilobytes is not remembered');
    for (const header of ['cache-control', 'pragma', 'if-none-match', 'if-modified-since', 'range', 'content-length', 'transfer-encoding']) {
      assert.equal(AnswerMemo.keyOf('GET', '/a', false, { [header]: '1' }), undefined, header);
    }
  });

  it('keys a POST that only reads by its body and type too, apart from any GET', () => {
    const body = Buffer.from('{"attributes":{"k":"a"}}');
    const json = { 'content-type': 'application/json' };
    const key = AnswerMemo.keyOfRead('/t/_query', false, json, body);
    assert.ok(key);
    assert.equal(AnswerMemo.keyOfRead('/t/_query', false, json, Buffer.from(body)), key, 'the same bytes, the same key');
    assert.notEqual(AnswerMemo.keyOfRead('/t/_query', false, json, Buffer.from('{"attributes":{"k":"b"}}')), key);
    assert.notEqual(AnswerMemo.keyOfRead('/t/_query', false, { 'content-type': 'text/plain' }, body), key);
    assert.notEqual(AnswerMemo.keyOfRead('/t/_query', true, json, body), key);
    assert.notEqual(AnswerMemo.keyOf('GET', '/t/_query', false, json), key);
    assert.equal(AnswerMemo.keyOfRead('/t/_query', false, json, Buffer.alloc(2000, 32)), undefined, 'a body of kilobytes is not remembered');
    assert.equal(AnswerMemo.keyOfRead('/t/_query', false, { ...json, 'cache-control': 'no-cache' }, body), undefined);
  });

  it('gives an entry back only before its time and while it is valid, counting each reuse', () => {
    const memo = new AnswerMemo(1024 * 1024);
    let valid = true;
    let reused = 0;
    memo.set('k', entry({ until: 1000, valid: () => valid, onReuse: () => reused++ }), 0, {});
    assert.equal(memo.get('k', 999, {}), undefined, 'an answer asked for once is not kept');
    memo.set('k', entry({ until: 1000, valid: () => valid, onReuse: () => reused++ }), 0, {});
    assert.ok(memo.get('k', 999, {}));
    assert.equal(reused, 1);
    valid = false;
    assert.equal(memo.get('k', 999, {}), undefined);
    valid = true;
    assert.equal(memo.get('k', 999, {}), undefined, 'dropped once found invalid');
    memo.set('k', entry({ until: 1000 }), 0, {});
    memo.set('k', entry({ until: 1000 }), 0, {});
    assert.equal(memo.get('k', 1000, {}), undefined, 'not at its time');
    assert.equal(reused, 1);
  });

  it('keeps the answer made after one ran out or stopped holding at once: its request is known to come again', () => {
    const memo = new AnswerMemo(1024 * 1024);
    memo.set('k', entry({ until: 1000 }), 0, {});
    memo.set('k', entry({ until: 1000 }), 0, {});
    assert.ok(memo.get('k', 999, {}));
    assert.equal(memo.get('k', 1000, {}), undefined, 'ran out');
    memo.set('k', entry({ until: 2000 }), 1000, {});
    assert.ok(memo.get('k', 1999, {}), 'made once after, and kept');
    let valid = false;
    memo.set('v', entry({ until: 1000 }), 0, {});
    memo.set('v', entry({ until: 1000, valid: () => valid }), 0, {});
    assert.equal(memo.get('v', 0, {}), undefined, 'no longer holds');
    valid = true;
    memo.set('v', entry({ until: 1000, valid: () => valid }), 0, {});
    assert.ok(memo.get('v', 0, {}), 'made once after, and kept');
    memo.set('fresh', entry({ until: 1000 }), 0, {});
    assert.equal(memo.get('fresh', 0, {}), undefined, 'a request asked once is still not kept');
  });

  it('does not keep an answer that may not be sent again at all', () => {
    const memo = new AnswerMemo(1024 * 1024);
    for (let i = 0; i < 3; i++) memo.set('late', entry({ until: 1000 }), 1000, {});
    assert.equal(memo.get('late', 0, {}), undefined, 'asked for three times, but past its time when made');
  });

  it('keeps nothing of a scan over more requests than it remembers', () => {
    const memo = new AnswerMemo(64 * 1024 * 1024);
    for (let round = 0; round < 2; round++) for (let i = 0; i < 10_000; i++) memo.set(`scan${i}`, entry({ until: Infinity }), 0, {});
    assert.equal(memo.get('scan0', 0, {}), undefined);
  });

  it('holds about as many bytes as it is given', () => {
    const memo = new AnswerMemo(64 * 1024);
    for (let i = 0; i < 100; i++) for (let twice = 0; twice < 2; twice++) memo.set(`k${i}`, { ...entry({ until: Infinity }), body: Buffer.alloc(8 * 1024) }, 0, {});
    const kept = Array.from({ length: 100 }, (_, i) => memo.get(`k${i}`, 0, {})).filter(Boolean).length;
    assert.ok(kept >= 5 && kept <= 8, `${kept} answers of 8 KB kept in 64 KB`);
  });

  it('keeps an answer that depends on its caller for that caller alone', () => {
    const memo = new AnswerMemo(1024 * 1024);
    const alice = { cookie: 'session=alice' };
    const bob = { cookie: 'session=bob' };
    const mine = { ...entry({ until: 1000, perCaller: true }), body: Buffer.from('alice\'s draft') };
    memo.set('k', mine, 0, alice);
    memo.set('k', mine, 0, alice);
    assert.equal(memo.get('k', 1, alice)?.body.toString(), 'alice\'s draft');
    for (const other of [bob, {}, { authorization: 'Bearer alice' }, { cookie: 'session=alice', authorization: 'Bearer x' }]) {
      assert.equal(memo.get('k', 1, other), undefined, JSON.stringify(other));
    }
    memo.set('k', { ...mine, body: Buffer.from('bob\'s view') }, 0, bob);
    memo.set('k', { ...mine, body: Buffer.from('bob\'s view') }, 0, bob);
    assert.equal(memo.get('k', 1, bob)?.body.toString(), 'bob\'s view');
    assert.equal(memo.get('k', 1, alice)?.body.toString(), 'alice\'s draft', 'each kept apart');
    assert.equal(memo.get('k', 1, { cookie: `session=${'x'.repeat(5000)}` }), undefined);
    for (let i = 0; i < 2; i++) memo.set('k', entry({ until: 1000 }), 0, bob);
    assert.equal(memo.get('k', 1, bob)?.body.toString(), 'x', 'an answer for everyone replaces the per-caller ones');
    assert.equal(memo.get('k', 1, alice)?.body.toString(), 'x');
  });
});
