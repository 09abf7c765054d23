import fs from 'node:fs';
import path from 'node:path';
import type { WikiFacts } from '../model/wiki-facts.js';
import type { ArchiveFile } from './snapshot-archive.js';

/**
 * What became of one title: written, did not exist at the time, hidden, unchanged since `since`,
 * lacking (deleted on the wiki since, never stored here: its text then cannot be read), or failed.
 */
export type Outcome = 'written' | 'absent' | 'hidden' | 'unchanged' | 'lacking' | 'failed';

/** What a chunk's metadata file says of it. */
export interface ChunkMeta {
  /** The chunk's NDJSON in bytes (its archive entry holds it compressed). */
  bytes: number;
  /** The archive's length once the chunk's entry was written to it: where a resumed run goes on. */
  archiveEnd: number;
  counts: Partial<Record<Outcome, number>>;
  deleted: string[];
  /** Titles whose outcome was `lacking`. */
  lacking?: string[];
  failed: { title: string; reason: string }[];
}

const VERSION = '0.1.0';

/** Where the metadata of a namespace's chunk is kept, once its entry is in the archive. */
export const chunkMetaFile = (work: string, ns: number, chunk: number) => path.join(work, `chunk-${ns}-${chunk}.meta.json`);

/** The metadata of a namespace's chunks written so far, in chunk order. */
export function chunkMetas(work: string, ns: number): ChunkMeta[] {
  const pattern = new RegExp(`^chunk-${ns}-(\\d+)\\.meta\\.json$`);
  return fs.readdirSync(work)
    .map((f) => ({ f, i: Number(pattern.exec(f)?.[1] ?? NaN) }))
    .filter(({ i }) => Number.isInteger(i))
    .sort((a, b) => a.i - b.i)
    .map(({ f }) => JSON.parse(fs.readFileSync(path.join(work, f), 'utf8')) as ChunkMeta);
}

/** Writes the manifest of the archives made: the moment, counts, deletions, failures, checksums. */
export function writeManifest(work: string, domain: string, facts: WikiFacts, options: { at: number; since?: number; namespaces: number[]; out: string; storageOnly?: boolean }, files: (ArchiveFile & { pages: number })[]): Record<string, unknown> {
  const counts: Partial<Record<Outcome, number>> = {};
  const deleted: string[] = [];
  const lacking: string[] = [];
  const failed: ChunkMeta['failed'] = [];
  for (const meta of options.namespaces.flatMap((ns) => chunkMetas(work, ns))) {
    for (const [k, n] of Object.entries(meta.counts)) counts[k as Outcome] = (counts[k as Outcome] ?? 0) + n;
    deleted.push(...meta.deleted);
    lacking.push(...(meta.lacking ?? []));
    failed.push(...meta.failed);
  }
  const manifest = {
    domain, wiki: facts.id, language: facts.language, date_modified: new Date(options.at).toISOString(),
    ...(options.since !== undefined ? { since: new Date(options.since).toISOString(), deleted } : {}),
    namespaces: options.namespaces, source: options.storageOnly ? 'storage' : 'wiki', counts, failed,
    // Deleted on the wiki since the moment and never stored here: the snapshot cannot say what they held then.
    lacking: lacking.map((title) => ({ title, reason: 'deleted on the wiki since the moment; no revision of it is stored here' })),
    files,
    generator: { name: 'wikistore', version: VERSION },
  };
  fs.writeFileSync(path.join(options.out, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
  return manifest;
}
