import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import tar from 'tar-stream';

export interface ArchiveFile {
  name: string;
  bytes: number;
  sha256: string;
}

const sha256 = (file: string) => new Promise<string>((resolve, reject) => {
  const hash = createHash('sha256');
  fs.createReadStream(file).on('data', (d) => hash.update(d)).on('end', () => resolve(hash.digest('hex'))).on('error', reject);
});

/**
 * One namespace's `.tar.gz`, made from its NDJSON chunks in order while the next ones are being
 * written (gzip runs on the thread pool beside them). The same chunks give the same bytes however
 * they were fed (deflate's output does not depend on how its input was split), so an archive
 * begun anew on a resumed run equals the one an uninterrupted run would have made.
 */
export class SnapshotArchive {
  private readonly pack = tar.pack();
  private readonly written: Promise<void>;
  /** The entries added so far, each written once the one before it was taken. */
  private queued: Promise<void> = Promise.resolve();
  private entries = 0;

  constructor(private readonly file: string, private readonly entryName: (i: number) => string, private readonly mtime: Date) {
    this.written = pipeline(this.pack, createGzip(), fs.createWriteStream(`${file}.tmp`));
    // Seen by `finish`; until then a failure must not go unhandled.
    this.written.catch(() => undefined);
  }

  /** Adds a chunk's file as the next entry (not waited for: `finish` waits for all). */
  add(chunk: string): void {
    const i = this.entries++;
    this.queued = this.queued.then(async () => {
      const body = await fs.promises.readFile(chunk);
      await new Promise<void>((resolve, reject) =>
        this.pack.entry({ name: this.entryName(i), size: body.length, mtime: this.mtime, mode: 0o644, uid: 0, gid: 0 }, body, (err) => (err ? reject(err) : resolve())),
      );
    });
    // Seen by `finish` (or dropped by `abandon`): not an unhandled rejection meanwhile.
    this.queued.catch(() => undefined);
  }

  /** Ends the archive and puts it in place. */
  async finish(): Promise<ArchiveFile> {
    await this.queued;
    this.pack.finalize();
    await this.written;
    fs.renameSync(`${this.file}.tmp`, this.file);
    return { name: this.file.slice(this.file.lastIndexOf('/') + 1), bytes: fs.statSync(this.file).size, sha256: await sha256(this.file) };
  }

  /** A run stopped or failed: the partial archive goes (the next run makes it again from the chunks). */
  async abandon(): Promise<void> {
    this.pack.destroy();
    await Promise.all([this.queued.catch(() => undefined), this.written.catch(() => undefined)]);
    fs.rmSync(`${this.file}.tmp`, { force: true });
  }
}
