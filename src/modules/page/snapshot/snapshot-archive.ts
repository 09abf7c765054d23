import { createHash } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import { finished } from 'node:stream/promises';
import { gzipSync } from 'node:zlib';

export interface ArchiveFile {
  name: string;
  bytes: number;
  sha256: string;
}

const sha256 = (file: string) => new Promise<string>((resolve, reject) => {
  const hash = createHash('sha256');
  fs.createReadStream(file).on('data', (d) => hash.update(d)).on('end', () => resolve(hash.digest('hex'))).on('error', reject);
});

const BLOCK = 512;
/** The largest entry a ustar header's 11 octal digits can give the size of. */
const MAX_ENTRY_BYTES = 8 ** 11 - 1;

/** A ustar header of a regular file (mode 644, owned by root): POSIX.1-1988's layout. */
export function tarHeader(name: string, size: number, mtime: Date): Buffer {
  if (Buffer.byteLength(name) > 100) throw new Error(`an archive entry's name is 100 bytes at most: ${name}`);
  if (size > MAX_ENTRY_BYTES) throw new Error(`an archive entry is ${MAX_ENTRY_BYTES} bytes at most: ${name} has ${size}`);
  const header = Buffer.alloc(BLOCK);
  const octal = (value: number, at: number, width: number) => header.write(`${value.toString(8).padStart(width - 1, '0')}\0`, at, width, 'ascii');
  header.write(name, 0, 100, 'utf8');
  octal(0o644, 100, 8);
  octal(0, 108, 8);
  octal(0, 116, 8);
  octal(size, 124, 12);
  octal(Math.floor(mtime.getTime() / 1000), 136, 12);
  header.write(' '.repeat(8), 148, 8, 'ascii');
  header.write('0', 156, 1, 'ascii');
  header.write('ustar\u000000', 257, 8, 'ascii');
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
  return header;
}

/**
 * One namespace's `.tar.gz`, made from its chunks in order while the next ones are being written.
 * A chunk is NDJSON already compressed as gzip members (each page's pieces: see snapshot-writer.ts),
 * so the archive is those members between members of the tar headers and padding, copied, never
 * compressed again: a gzip file may hold members one after another (RFC 1952, 2.2), and readers
 * of `.tar.gz` (gzip, Python, Go, Java, Node) read them as one stream. The same chunks give the same
 * bytes, so an archive begun anew on a resumed run equals the one an uninterrupted run would have made.
 */
export class SnapshotArchive {
  private readonly out: fs.WriteStream;
  private readonly written: Promise<void>;
  /** The entries added so far, each copied once the one before it was. */
  private queued: Promise<void> = Promise.resolve();
  private entries = 0;

  constructor(private readonly file: string, private readonly entryName: (i: number) => string, private readonly mtime: Date) {
    this.out = fs.createWriteStream(`${file}.tmp`);
    this.written = finished(this.out);
    // Seen by `finish`; until then a failure must not go unhandled.
    this.written.catch(() => undefined);
  }

  private async write(data: Buffer): Promise<void> {
    if (!this.out.write(data)) await Promise.race([once(this.out, 'drain'), this.written]);
  }

  /** Adds a chunk's file (`bytes` of NDJSON once inflated) as the next entry (not waited for: `finish` waits for all). */
  add(chunk: string, bytes: number): void {
    const i = this.entries++;
    this.queued = this.queued.then(async () => {
      await this.write(gzipSync(tarHeader(this.entryName(i), bytes, this.mtime)));
      for await (const data of fs.createReadStream(chunk, { highWaterMark: 1 << 20 })) await this.write(data as Buffer);
      if (bytes % BLOCK) await this.write(gzipSync(Buffer.alloc(BLOCK - (bytes % BLOCK))));
    });
    // Seen by `finish` (or dropped by `abandon`): not an unhandled rejection meanwhile.
    this.queued.catch(() => undefined);
  }

  /** Ends the archive (two zero blocks) and puts it in place. */
  async finish(): Promise<ArchiveFile> {
    await this.queued;
    await this.write(gzipSync(Buffer.alloc(2 * BLOCK)));
    this.out.end();
    await this.written;
    fs.renameSync(`${this.file}.tmp`, this.file);
    return { name: this.file.slice(this.file.lastIndexOf('/') + 1), bytes: fs.statSync(this.file).size, sha256: await sha256(this.file) };
  }

  /** A run stopped or failed: the partial archive goes (the next run makes it again from the chunks). */
  async abandon(): Promise<void> {
    this.out.destroy();
    await Promise.all([this.queued.catch(() => undefined), this.written.catch(() => undefined)]);
    fs.rmSync(`${this.file}.tmp`, { force: true });
  }
}
