import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, it } from 'node:test';
import { bodyToBytes, toJson, toJsonBytes } from '../../../src/http/serialize.js';

describe('JSON with blobs as base64', () => {
  const big = crypto.randomBytes(50 * 1024);
  const small = crypto.randomBytes(100);

  it('splices large blobs in as base64, byte for byte what JSON.stringify would make', () => {
    const value = { items: [{ key: 'k', value: big, small, n: 1, s: 'é"\\n' }, { value: big.subarray(10, 9000) }], next: 'x' };
    const bytes = toJsonBytes(value);
    assert.equal(bytes.toString('utf8'), toJson(value));
    const back = JSON.parse(bytes.toString('utf8'));
    assert.ok(Buffer.from(back.items[0].value, 'base64').equals(big));
  });

  it('is not fooled by a string of the value that looks like its own mark', () => {
    const value = { a: '\u0000blob\u00000\u0000blob\u0000', b: big, c: ['\u0000blob\u0000'] };
    assert.equal(toJsonBytes(value).toString('utf8'), toJson(value));
    assert.deepEqual(JSON.parse(toJsonBytes(value).toString('utf8')).c, ['\u0000blob\u0000']);
  });

  it('makes the JSON of a frozen answer once, and of anything else anew each time', () => {
    const frozen = Object.freeze({ items: Object.freeze([Object.freeze({ key: 'k', value: big })]) });
    const first = bodyToBytes(frozen).bytes;
    assert.equal(bodyToBytes(frozen).bytes, first, 'the same bytes, not made again');
    assert.equal(first.toString('utf8'), toJson(frozen));
    const open: { items: unknown[] } = { items: [{ key: 'k' }] };
    const before = bodyToBytes(open).bytes.toString('utf8');
    open.items.push({ key: 'l' });
    assert.notEqual(bodyToBytes(open).bytes.toString('utf8'), before);
    assert.equal(bodyToBytes(open).bytes.toString('utf8'), toJson(open));
  });
});
