import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { storedGzip } from '../../../util/compression.js';

export interface ArchiveFile {
  name: string;
  bytes: number;
  sha256: string;
}

/** How much of an archive is read back at once to hash it. */
const HASH_PIECE_BYTES = 1 << 20;

/**
 * A file's SHA-256, each piece read (on the thread pool) while the one before is hashed: about the
 * hashing's own time, where a read stream took twice as long (12 MB: 11 ms against 26).
 */
async function sha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  const handle = await fs.promises.open(file, 'r');
  try {
    const length = (await handle.stat()).size;
    const pieces = [Buffer.allocUnsafe(HASH_PIECE_BYTES), Buffer.allocUnsafe(HASH_PIECE_BYTES)];
    const readAt = (at: number, piece: Buffer) => handle.read(piece, 0, Math.min(piece.length, length - at), at);
    let at = 0;
    let reading = length > 0 ? readAt(0, pieces[0]!) : undefined;
    for (let i = 0; reading; i ^= 1) {
      const { bytesRead } = await reading;
      if (bytesRead === 0) throw new Error(`${file} ended before its ${length} bytes`);
      at += bytesRead;
      reading = at < length ? readAt(at, pieces[i ^ 1]!) : undefined;
      hash.update(pieces[i]!.subarray(0, bytesRead));
    }
    return hash.digest('hex');
  } finally {
    await handle.close();
  }
}

const BLOCK = 512;
/** The largest entry a ustar header's 11 octal digits can give the size of. */
const MAX_ENTRY_BYTES = 8 ** 11 - 1;
/** An entry's header as the archive holds it: one gzip member of stored deflate, always this long. */
const HEADER_MEMBER_BYTES = storedGzip(Buffer.alloc(BLOCK)).length;
/** Written to the disk in pieces of about this size (fewer system calls than one a page). */
const FLUSH_BYTES = 4 << 20;
/** No more buffers than this in one vectored write (the system's IOV_MAX is 1,024). */
const FLUSH_PARTS = 512;

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
 * One namespace's `.tar.gz`, written in place as its entries' NDJSON is made: one entry a chunk
 * of pages. The NDJSON comes compressed already, as gzip members (each page's pieces: see
 * snapshot-writer.ts), and goes into the archive as it is, between members holding the tar
 * headers and padding: a gzip file may hold members one after another (RFC 1952, 2.2), and
 * readers of `.tar.gz` (gzip, Python, Go, Java, Node) read them as one stream.
 *
 * An entry's header names its size, known only at its end: its place is kept (a header member of
 * stored deflate is always as long) and written then. So a chunk's bytes are written once, where
 * they stay, not to a file of their own first and copied. An ended entry is written to the file
 * (`end` answers the archive's length then): a run stopped or killed anywhere after it is resumed
 * from that length (`open`), and the same entries give the same bytes, resumed or not. (Written,
 * not synced: a machine that loses power loses what its disk had not taken, as with any file.)
 */
export class SnapshotArchive {
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  /** Where `pending` goes: the bytes written to the file before it. */
  private offset: number;
  private entry?: { index: number; headerAt: number };
  private closed = false;

  private constructor(private readonly file: string, private readonly handle: fs.promises.FileHandle, private readonly entryName: (i: number) => string, private readonly mtime: Date, length: number) {
    this.offset = length;
  }

  /**
   * The archive of `file`, being written to `file.tmp`: anew, or (`resumeAt`, the length an
   * ended entry left) kept up to there and written on after it. Undefined if the partial archive
   * is shorter than that (gone: the entries must be made again).
   */
  static async open(file: string, entryName: (i: number) => string, mtime: Date, resumeAt = 0): Promise<SnapshotArchive | undefined> {
    const tmp = `${file}.tmp`;
    if (resumeAt > 0 && !(fs.existsSync(tmp) && fs.statSync(tmp).size >= resumeAt)) return undefined;
    // A new archive is opened empty ('w'); a resumed one loses what followed its last ended entry.
    const handle = await fs.promises.open(tmp, resumeAt > 0 ? 'r+' : 'w');
    if (resumeAt > 0) await handle.truncate(resumeAt);
    return new SnapshotArchive(file, handle, entryName, mtime, resumeAt);
  }

  private async flush(): Promise<void> {
    let parts = this.pending;
    let bytes = this.pendingBytes;
    this.pending = [];
    this.pendingBytes = 0;
    while (bytes > 0) {
      const { bytesWritten } = await this.handle.writev(parts, this.offset);
      this.offset += bytesWritten;
      bytes -= bytesWritten;
      // A short write (rare): what is left, as one buffer.
      if (bytes > 0) {
        const all = Buffer.concat(parts);
        parts = [all.subarray(all.length - bytes)];
      }
    }
  }

  private async put(data: Uint8Array): Promise<void> {
    this.pending.push(data);
    this.pendingBytes += data.length;
    if (this.pendingBytes >= FLUSH_BYTES || this.pending.length >= FLUSH_PARTS) await this.flush();
  }

  /** Begins entry `index`: its header's place is kept. */
  async begin(index: number): Promise<void> {
    if (this.entry) throw new Error('an archive entry is under way');
    this.entry = { index, headerAt: this.offset + this.pendingBytes };
    await this.put(Buffer.alloc(HEADER_MEMBER_BYTES));
  }

  /** Writes part of the entry under way (gzip members); waits when the disk is behind. */
  write(data: Uint8Array): Promise<void> {
    if (!this.entry) throw new Error('no archive entry is under way');
    return this.put(data);
  }

  /**
   * Ends the entry under way, of `bytes` of NDJSON: its padding, then its header in its place, all
   * written to the file. Answers the archive's length: where a resumed run goes on.
   */
  async end(bytes: number): Promise<number> {
    const entry = this.entry;
    if (!entry) throw new Error('no archive entry is under way');
    const header = storedGzip(tarHeader(this.entryName(entry.index), bytes, this.mtime));
    if (bytes % BLOCK) await this.put(storedGzip(Buffer.alloc(BLOCK - (bytes % BLOCK))));
    await this.flush();
    await this.handle.write(header, 0, header.length, entry.headerAt);
    this.entry = undefined;
    return this.offset;
  }

  /** Ends the archive (two zero blocks) and puts it in place. */
  async finish(): Promise<ArchiveFile> {
    if (this.entry) throw new Error('an archive entry is under way');
    await this.put(storedGzip(Buffer.alloc(2 * BLOCK)));
    await this.flush();
    await this.close();
    fs.renameSync(`${this.file}.tmp`, this.file);
    return { name: this.file.slice(this.file.lastIndexOf('/') + 1), bytes: fs.statSync(this.file).size, sha256: await sha256(this.file) };
  }

  /**
   * Closes the file (once; `finish` does too). A run stopped or failed leaves the partial archive
   * for the next run to resume, up to the last ended entry.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.pending = [];
    await this.handle.close();
  }
}
