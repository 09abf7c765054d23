import fs from 'node:fs';
import path from 'node:path';
import { storedGzip } from '../../../util/compression.js';
import { chunkMetas } from '../snapshot/snapshot-manifest.js';

/** One namespace's archive of a finished snapshot, as Enterprise's snapshot API describes it. */
export interface ShelvedSnapshot {
  identifier: string;
  version: string;
  date_modified: string;
  is_part_of: { identifier: string };
  in_language?: { identifier: string };
  namespace: { identifier: number };
  size: { value: number; unit_text: 'MB' };
  chunks: string[];
}

/** Bytes served for a download: pieces of files and literal bytes, in order. */
export type Segment = { file: string; start: number; end: number } | { bytes: Buffer };

export interface Download {
  segments: Segment[];
  size: number;
  /** Strong: the archive's SHA-256 (and the chunk's place in it). */
  etag: string;
  modified: string;
}

interface ManifestFile {
  name: string;
  bytes: number;
  sha256: string;
  pages: number;
}

interface Manifest {
  wiki: string;
  date_modified: string;
  namespaces: number[];
  files: ManifestFile[];
  language?: string;
}

/** A finished snapshot's chunks, as its work folder remembers them (none if that is gone: the archive is still whole). */
const chunksOf = (folder: string, ns: number) => (fs.existsSync(path.join(folder, '.work')) ? chunkMetas(path.join(folder, '.work'), ns) : []);

/** A tar archive's end (two zero blocks) as a gzip member: what makes a chunk's slice a whole `.tar.gz`. */
const TAR_END = storedGzip(Buffer.alloc(1024));

const MB = 1024 * 1024;

/** A day as Enterprise's batches name one (UTC). */
export const DAY_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

/** Batches are kept this many days, as Enterprise keeps them. */
export const BATCH_DAYS = 14;

/** A chunk's index from its identifier (`{snapshot}_chunk_{n}`) or from the index alone, as Enterprise takes either. */
function chunkIndex(identifier: string, chunkId: string): number | undefined {
  const digits = chunkId.startsWith(`${identifier}_chunk_`) ? chunkId.slice(identifier.length + 7) : chunkId;
  return /^(0|[1-9]\d{0,8})$/.test(digits) ? Number(digits) : undefined;
}

/**
 * Finished snapshots of each wiki, where the snapshot command and the schedule write them:
 * `{dir}/{domain}/{moment}/` holding `manifest.json` (written last: a snapshot without it is
 * being written, and is not offered), the namespaces' `.tar.gz` and the chunks' metadata. Only the
 * newest finished snapshot of each wiki is offered, as Enterprise offers one per project and
 * namespace.
 */
export class SnapshotShelf {
  constructor(readonly dir: string) {}

  /**
   * Where a wiki's snapshots are (`{dir}/{domain}/`), or its batches of one day (`{dir}/{domain}/batches/{day}/`);
   * undefined for a name that is neither.
   */
  private placeOf(domain: string, day?: string): string | undefined {
    if (!domain || domain.includes('/') || domain.startsWith('.') || (day !== undefined && !DAY_PATTERN.test(day))) return undefined;
    return day === undefined ? path.join(this.dir, domain) : path.join(this.dir, domain, 'batches', day);
  }

  /** Where a snapshot of `domain` at `at` (ms) is written (`day`: a batch of that day). */
  folderFor(domain: string, at: number, day?: string): string {
    return path.join(this.placeOf(domain, day)!, new Date(at).toISOString().replace(/[:.]/g, ''));
  }

  /** The wiki's snapshot folders (`day`: its batches of that day), newest first; `finished`: those with their manifest. */
  runs(domain: string, { finished = true } = {}, day?: string): string[] {
    const base = this.placeOf(domain, day);
    if (base === undefined || !fs.existsSync(base)) return [];
    return fs.readdirSync(base).filter((d) => /^\d{4}-\d{2}-\d{2}T\d{9}Z$/.test(d)).sort().reverse().map((d) => path.join(base, d))
      .filter((d) => !finished || fs.existsSync(path.join(d, 'manifest.json')));
  }

  private newest(domain: string, day?: string): { folder: string; manifest: Manifest } | undefined {
    const folder = this.runs(domain, {}, day)[0];
    return folder ? { folder, manifest: JSON.parse(fs.readFileSync(path.join(folder, 'manifest.json'), 'utf8')) as Manifest } : undefined;
  }

  /** The newest finished snapshot's archives (`day`: the day's newest batch, each namespace's). */
  list(domain: string, day?: string): ShelvedSnapshot[] {
    const newest = this.newest(domain, day);
    if (!newest) return [];
    const { folder, manifest } = newest;
    return manifest.files.map((file) => {
      const identifier = file.name.replace(/\.tar\.gz$/, '');
      const ns = Number(/_namespace_(\d+)$/.exec(identifier)?.[1] ?? 0);
      return {
        identifier,
        version: file.sha256.slice(0, 32),
        date_modified: manifest.date_modified,
        is_part_of: { identifier: manifest.wiki },
        ...(manifest.language ? { in_language: { identifier: manifest.language } } : {}),
        namespace: { identifier: ns },
        size: { value: Math.round((file.bytes / MB) * 1000) / 1000, unit_text: 'MB' as const },
        chunks: chunksOf(folder, ns).map((_, i) => `${identifier}_chunk_${i}`),
      };
    });
  }

  get(domain: string, identifier: string, day?: string): ShelvedSnapshot | undefined {
    return this.list(domain, day).find((s) => s.identifier === identifier);
  }

  /**
   * One chunk's description, as Enterprise describes a chunk: the snapshot's, with the chunk's own
   * identifier and size. `chunkId` is the chunk's identifier or its index alone (`…_chunk_2` or `2`).
   */
  chunkInfo(domain: string, identifier: string, chunkId: string): Omit<ShelvedSnapshot, 'chunks'> | undefined {
    const snapshot = this.get(domain, identifier);
    const index = chunkIndex(identifier, chunkId);
    const download = index === undefined ? undefined : this.chunk(domain, identifier, String(index));
    if (!snapshot || !download) return undefined;
    const { chunks: _chunks, ...described } = snapshot;
    return { ...described, identifier: `${identifier}_chunk_${index}`, size: { value: Math.round((download.size / MB) * 1000) / 1000, unit_text: 'MB' } };
  }

  /** The whole archive of a namespace. */
  download(domain: string, identifier: string, day?: string): Download | undefined {
    const newest = this.newest(domain, day);
    const file = newest?.manifest.files.find((f) => f.name === `${identifier}.tar.gz`);
    if (!newest || !file) return undefined;
    return { segments: [{ file: path.join(newest.folder, file.name), start: 0, end: file.bytes }], size: file.bytes, etag: `"${file.sha256}"`, modified: newest.manifest.date_modified };
  }

  /**
   * One chunk as a `.tar.gz` of its own: its entry's gzip members as the archive holds them (each
   * chunk starts a member; see snapshot-archive.ts), and a tar end.
   */
  chunk(domain: string, identifier: string, chunkId: string): Download | undefined {
    const newest = this.newest(domain);
    const file = newest?.manifest.files.find((f) => f.name === `${identifier}.tar.gz`);
    const index = chunkIndex(identifier, chunkId);
    if (!newest || !file || index === undefined) return undefined;
    const ns = Number(/_namespace_(\d+)$/.exec(identifier)?.[1] ?? 0);
    const metas = chunksOf(newest.folder, ns);
    const meta = metas[index];
    if (!meta) return undefined;
    const start = index === 0 ? 0 : metas[index - 1]!.archiveEnd;
    const end = meta.archiveEnd;
    return {
      segments: [{ file: path.join(newest.folder, file.name), start, end }, { bytes: TAR_END }],
      size: end - start + TAR_END.length,
      etag: `"${file.sha256}-${index}"`,
      modified: newest.manifest.date_modified,
    };
  }

  /** The days a wiki has batches of, newest first. */
  batchDays(domain: string): string[] {
    const base = path.join(this.placeOf(domain) ?? '', 'batches');
    if (this.placeOf(domain) === undefined || !fs.existsSync(base)) return [];
    return fs.readdirSync(base).filter((d) => DAY_PATTERN.test(d)).sort().reverse();
  }

  /** Drops a wiki's batches but the newest finished one of each day, and the days past `BATCH_DAYS`. */
  pruneBatches(domain: string, today: string): void {
    const oldest = new Date(Date.parse(`${today}T00:00:00Z`) - (BATCH_DAYS - 1) * 86_400_000).toISOString().slice(0, 10);
    for (const day of this.batchDays(domain)) {
      if (day < oldest) {
        fs.rmSync(path.join(this.dir, domain, 'batches', day), { recursive: true, force: true });
        continue;
      }
      const [newest, ...older] = this.runs(domain, {}, day);
      for (const run of older) fs.rmSync(run, { recursive: true, force: true });
      if (newest) for (const run of this.runs(domain, { finished: false }, day)) if (run < newest) fs.rmSync(run, { recursive: true, force: true });
    }
  }

  /** Drops all but the newest `keep` finished snapshots of a wiki (and unfinished ones older than the newest finished). */
  prune(domain: string, keep: number): void {
    const finished = this.runs(domain);
    for (const old of finished.slice(keep)) fs.rmSync(old, { recursive: true, force: true });
    const newest = finished[0];
    if (!newest) return;
    for (const run of this.runs(domain, { finished: false })) if (run < newest && !finished.includes(run)) fs.rmSync(run, { recursive: true, force: true });
  }
}
