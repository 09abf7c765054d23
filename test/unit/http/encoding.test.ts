import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { describe, it } from 'node:test';
import { encodeBody } from '../../../src/http/encoding.js';

describe('sending stored compressed bodies to clients that do not accept gzip', () => {
  const text = 'A stored render. '.repeat(5000);

  it('decompresses a hot stored body once: from its second request on, the kept bytes are sent', async () => {
    const stored = zlib.gzipSync(text);
    const send = async () => {
      const headers: Record<string, string> = { 'content-type': 'text/html', 'content-encoding': 'gzip' };
      const body = await encodeBody(stored, headers, undefined);
      assert.equal(headers['content-encoding'], undefined);
      assert.match(headers.vary ?? '', /Accept-Encoding/);
      return body;
    };
    const first = await send();
    const second = await send();
    const third = await send();
    assert.equal(first.toString(), text);
    assert.equal(second.toString(), text);
    assert.equal(third, second, 'the kept bytes, not a new decompression');
    assert.notEqual(second, first);
  });

  it('keeps nothing of bodies read anew for each request', async () => {
    const a = await encodeBody(zlib.gzipSync(text), { 'content-encoding': 'gzip' }, 'identity');
    const b = await encodeBody(zlib.gzipSync(text), { 'content-encoding': 'gzip' }, 'identity');
    assert.notEqual(a, b);
    assert.equal(a.toString(), b.toString());
  });

  it('sends the stored bytes as they are to clients that accept them', async () => {
    const stored = zlib.gzipSync(text);
    const headers: Record<string, string> = { 'content-encoding': 'gzip' };
    assert.equal(await encodeBody(stored, headers, 'gzip, br'), stored);
    assert.equal(headers['content-encoding'], 'gzip');
  });
});
