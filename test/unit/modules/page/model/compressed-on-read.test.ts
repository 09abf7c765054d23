import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import zlib from 'node:zlib';
import { compressedOnRead } from '../../../../../src/modules/page/model/compressed-on-read.js';

describe('parts compressed when read', () => {
  const text = (kb: number) => Buffer.from('<p>wiki text, a line of it</p>\n'.repeat(Math.ceil((kb * 1024) / 31)));

  it('gives the bytes storage keeps, whether a part was read first or compressed by settle, and never compresses a part twice', async () => {
    const raw = { html: text(40), 'data-parsoid': Buffer.concat([randomBytes(1024), text(400)]), 'data-mw': text(2) };
    const { parts, settle } = compressedOnRead(raw);
    const html = parts.html;
    assert.deepEqual(html, zlib.gzipSync(raw.html, { level: 6 }));
    assert.equal(parts.html, html, 'a part read twice is the same buffer');
    await settle();
    assert.equal(parts.html, html, 'settle keeps a part already read');
    for (const key of Object.keys(raw) as (keyof typeof raw)[]) assert.deepEqual(zlib.gunzipSync(parts[key]), raw[key], key);
    assert.deepEqual(parts['data-parsoid'], zlib.gzipSync(raw['data-parsoid'], { level: 6 }), 'a large part compressed on the pool gives the same bytes');
    const spread = { ...parts };
    assert.deepEqual(Object.keys(spread), ['html', 'data-parsoid', 'data-mw'], 'spread like a plain record');
    assert.equal(spread['data-mw'], parts['data-mw']);
  });
});
