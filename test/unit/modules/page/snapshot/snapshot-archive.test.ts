import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, it } from 'node:test';
import { SnapshotArchive } from '../../../../../src/modules/page/snapshot/snapshot-archive.js';
import { tarEntries } from '../../../../tar-entries.js';

/** A chunk as the writer hands it over: each line as gzip members; and its NDJSON. */
function chunk(lines: string[]): { members: Buffer[]; text: string } {
  return { members: lines.flatMap((line) => [gzipSync(line.slice(0, 5)), gzipSync(line.slice(5))]), text: lines.join('') };
}

describe('snapshot archives', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wikistore-archive-'));
  const lines = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `${JSON.stringify({ name: `Page ${from + i}`, body: 'é"\\'.repeat(from + i) })}\n`);
  // The third is past the archive's write buffer: written in several pieces while it is under way.
  const chunks = [chunk(lines(3)), chunk(lines(40, 3)), chunk([]), chunk(lines(2, 5000).map((line) => line.replace('"body":"', `"body":"${'x'.repeat(3 << 20)}`)))];
  const mtime = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
  const entryName = (i: number) => `wiki_namespace_0_${i}.ndjson`;

  async function addChunk(archive: SnapshotArchive, i: number): Promise<number> {
    await archive.begin(i);
    for (const member of chunks[i]!.members) await archive.write(member);
    return archive.end(Buffer.byteLength(chunks[i]!.text));
  }

  async function archive(file: string): Promise<Buffer> {
    const made = (await SnapshotArchive.open(file, entryName, mtime))!;
    for (let i = 0; i < chunks.length; i++) await addChunk(made, i);
    const finished = await made.finish();
    assert.equal(finished.bytes, fs.statSync(file).size);
    assert.equal(finished.sha256, createHash('sha256').update(fs.readFileSync(file)).digest('hex'));
    assert.ok(!fs.existsSync(`${file}.tmp`));
    return fs.readFileSync(file);
  }

  it('hold each chunk as an entry of its NDJSON, read back by tar-stream and by tar and gzip', async () => {
    const file = path.join(dir, 'one.tar.gz');
    await archive(file);
    const read = await tarEntries(file);
    assert.deepEqual(read.map((e) => e.name), chunks.map((_, i) => entryName(i)));
    assert.deepEqual(read.map((e) => e.text), chunks.map((c) => c.text));
    assert.deepEqual(read.map((e) => e.size), chunks.map((c) => Buffer.byteLength(c.text)));
    assert.ok(read.every((e) => e.mtime === mtime.getTime()));
    // GNU tar through gzip: the reader most scripts use, every member one stream.
    assert.deepEqual(execFileSync('tar', ['-tzvf', file], { encoding: 'utf8' }).split('\n').filter(Boolean).map((l) => l.split(/\s+/).at(-1)), read.map((e) => e.name));
    assert.equal(execFileSync('tar', ['-xzOf', file, entryName(1)], { encoding: 'utf8' }), chunks[1]!.text);
  });

  it('are the same bytes however often they are made', async () => {
    assert.deepEqual(await archive(path.join(dir, 'two.tar.gz')), await archive(path.join(dir, 'three.tar.gz')));
  });

  it('go on after the last entry ended when a run stopped in the middle of the next, and give the same bytes', async () => {
    const file = path.join(dir, 'resumed.tar.gz');
    const first = (await SnapshotArchive.open(file, entryName, mtime))!;
    await addChunk(first, 0);
    const ended = await addChunk(first, 1);
    // Stopped with half of the next entry written (on the disk: past the write buffer).
    await first.begin(2);
    await first.write(Buffer.alloc(5 << 20, 7));
    await first.close();
    assert.ok(fs.statSync(`${file}.tmp`).size > ended);
    const resumed = (await SnapshotArchive.open(file, entryName, mtime, ended))!;
    for (let i = 2; i < chunks.length; i++) await addChunk(resumed, i);
    await resumed.finish();
    assert.deepEqual(fs.readFileSync(file), await archive(path.join(dir, 'whole.tar.gz')));
    // A partial archive gone or cut short cannot be resumed: the caller makes its entries again.
    assert.equal(await SnapshotArchive.open(path.join(dir, 'gone.tar.gz'), entryName, mtime, ended), undefined);
  });

  it('name the SHA-256 of an archive read back in several pieces', async () => {
    // Incompressible lines (stored deflate): 2.5 MB, past the pieces the hash reads at once.
    const file = path.join(dir, 'large.tar.gz');
    const made = (await SnapshotArchive.open(file, entryName, mtime))!;
    await made.begin(0);
    let bytes = 0;
    for (let i = 0; i < 5; i++) {
      const line = `${randomBytes(384 * 1024).toString('base64')}\n`;
      await made.write(gzipSync(line, { level: 0 }));
      bytes += line.length;
    }
    await made.end(bytes);
    const finished = await made.finish();
    const whole = fs.readFileSync(file);
    assert.ok(whole.length > 2.5e6);
    assert.equal(finished.sha256, createHash('sha256').update(whole).digest('hex'));
    assert.equal((await tarEntries(file))[0]?.text.length, bytes);
  });

  it('refuse an entry name a ustar header cannot hold', async () => {
    const made = (await SnapshotArchive.open(path.join(dir, 'long.tar.gz'), () => 'x'.repeat(101), mtime))!;
    await made.begin(0);
    await assert.rejects(made.end(0), /100 bytes/);
    await made.close();
  });
});
