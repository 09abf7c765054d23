import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import zlib from 'node:zlib';
import { storedGzip } from '../../src/util/compression.js';

describe('a gzip member of stored blocks', () => {
  it('reads back as it was, alone and among compressed members, in zlib and in GNU gzip, at every block boundary', () => {
    for (const size of [0, 1, 300, 0xffff, 0xffff + 1, 3 * 0xffff + 17]) {
      const data = randomBytes(size);
      const member = storedGzip(data);
      assert.equal(member.length, 18 + Math.max(1, Math.ceil(size / 0xffff)) * 5 + size, 'uncompressed: 5 bytes a block');
      assert.deepEqual(zlib.gunzipSync(member), data, `${size} bytes`);
      const stream = Buffer.concat([zlib.gzipSync('before '), member, zlib.gzipSync(' after')]);
      assert.deepEqual(zlib.gunzipSync(stream), Buffer.concat([Buffer.from('before '), data, Buffer.from(' after')]));
      assert.deepEqual(execFileSync('gzip', ['-dc'], { input: stream }), Buffer.concat([Buffer.from('before '), data, Buffer.from(' after')]), 'GNU gzip checks the CRC and the length too');
    }
  });
});
