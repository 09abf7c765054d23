import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, it } from 'node:test';
import { SnapshotArchive } from '../../../../../src/modules/page/snapshot/snapshot-archive.js';
import { tarEntries } from '../../../../tar-entries.js';

/** A chunk as the writer leaves it: each line as gzip members; and its NDJSON. */
function chunk(dir: string, name: string, lines: string[]): { file: string; text: string } {
  const file = path.join(dir, name);
  fs.writeFileSync(file, Buffer.concat(lines.flatMap((line) => [gzipSync(line.slice(0, 5)), gzipSync(line.slice(5))])));
  return { file, text: lines.join('') };
}

describe('snapshot archives', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wikistore-archive-'));
  const lines = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `${JSON.stringify({ name: `Page ${from + i}`, body: 'é"\\'.repeat(from + i) })}\n`);
  const chunks = [chunk(dir, 'a.gz', lines(3)), chunk(dir, 'b.gz', lines(40, 3)), chunk(dir, 'c.gz', [])];
  const mtime = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));

  async function archive(file: string): Promise<Buffer> {
    const made = new SnapshotArchive(file, (i) => `wiki_namespace_0_${i}.ndjson`, mtime);
    for (const c of chunks) made.add(c.file, Buffer.byteLength(c.text));
    const finished = await made.finish();
    assert.equal(finished.bytes, fs.statSync(file).size);
    return fs.readFileSync(file);
  }

  it('hold each chunk as an entry of its NDJSON, read back by tar-stream and by tar and gzip', async () => {
    const file = path.join(dir, 'one.tar.gz');
    await archive(file);
    const read = await tarEntries(file);
    assert.deepEqual(read.map((e) => e.name), ['wiki_namespace_0_0.ndjson', 'wiki_namespace_0_1.ndjson', 'wiki_namespace_0_2.ndjson']);
    assert.deepEqual(read.map((e) => e.text), chunks.map((c) => c.text));
    assert.deepEqual(read.map((e) => e.size), chunks.map((c) => Buffer.byteLength(c.text)));
    assert.ok(read.every((e) => e.mtime === mtime.getTime()));
    // GNU tar through gzip: the reader most scripts use, every member one stream.
    assert.deepEqual(execFileSync('tar', ['-tzvf', file], { encoding: 'utf8' }).split('\n').filter(Boolean).map((l) => l.split(/\s+/).at(-1)), read.map((e) => e.name));
    assert.equal(execFileSync('tar', ['-xzOf', file, 'wiki_namespace_0_1.ndjson'], { encoding: 'utf8' }), chunks[1]!.text);
  });

  it('are the same bytes however often they are made', async () => {
    assert.deepEqual(await archive(path.join(dir, 'two.tar.gz')), await archive(path.join(dir, 'three.tar.gz')));
  });

  it('refuse an entry name a ustar header cannot hold, and leave nothing behind when abandoned', async () => {
    const file = path.join(dir, 'long.tar.gz');
    const made = new SnapshotArchive(file, () => 'x'.repeat(101), mtime);
    made.add(chunks[0]!.file, Buffer.byteLength(chunks[0]!.text));
    await assert.rejects(made.finish(), /100 bytes/);
    await made.abandon();
    assert.ok(!fs.existsSync(file) && !fs.existsSync(`${file}.tmp`));
  });
});
