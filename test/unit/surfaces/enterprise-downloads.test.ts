import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { serveDownload } from '../../../src/surfaces/enterprise/downloads.js';
import { HttpError } from '../../../src/util/errors.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wikistore-download-'));
const file = path.join(dir, 'a.bin');
fs.writeFileSync(file, Buffer.from('0123456789'));
// Bytes 2..7 of the file, then a literal tail: a chunk's slice and its tar end.
const download = { segments: [{ file, start: 2, end: 8 }, { bytes: Buffer.from('XY') }], size: 8, etag: '"e"', modified: '2026-01-01T00:00:00Z' };

async function read(body: unknown): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of body as Readable) parts.push(Buffer.from(part as Buffer));
  return Buffer.concat(parts).toString();
}

describe('snapshot downloads', () => {
  it('sends the whole, or one range across the segments, with its Content-Range', async () => {
    const whole = serveDownload(download, {}, 'GET', 'a.tar.gz');
    assert.equal(whole.status, 200);
    assert.equal(await read(whole.body), '234567XY');
    const middle = serveDownload(download, { range: 'bytes=4-6' }, 'GET', 'a.tar.gz');
    assert.equal(middle.status, 206);
    assert.equal(middle.headers!['content-range'], 'bytes 4-6/8');
    assert.equal(middle.headers!['content-length'], '3');
    assert.equal(await read(middle.body), '67X');
    assert.equal(await read(serveDownload(download, { range: 'bytes=-3' }, 'GET', 'a.tar.gz').body), '7XY');
    assert.equal(await read(serveDownload(download, { range: 'bytes=6-' }, 'GET', 'a.tar.gz').body), 'XY');
  });

  it('answers 416 for a range past the end, and the whole for an If-Range that does not match', async () => {
    assert.throws(() => serveDownload(download, { range: 'bytes=8-' }, 'GET', 'a.tar.gz'), (e: unknown) => e instanceof HttpError && e.status === 416 && e.headers['content-range'] === 'bytes */8');
    const stale = serveDownload(download, { range: 'bytes=0-1', 'if-range': '"other"' }, 'GET', 'a.tar.gz');
    assert.equal(stale.status, 200);
    assert.equal(await read(stale.body), '234567XY');
    assert.equal(serveDownload(download, { 'if-none-match': '"e"' }, 'GET', 'a.tar.gz').status, 304);
  });

  it('gives a HEAD the length without the bytes', async () => {
    const head = serveDownload(download, {}, 'HEAD', 'a.tar.gz');
    assert.equal(head.headers!['content-length'], '8');
    assert.equal(await read(head.body), '');
  });
});
