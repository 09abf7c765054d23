import fs from 'node:fs';
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import tar from 'tar-stream';

export interface TarEntry {
  name: string;
  size: number;
  mtime: number;
  text: string;
}

/** The entries of a .tar.gz as tar-stream reads them through Node's gunzip (every gzip member of it). */
export async function tarEntries(file: string): Promise<TarEntry[]> {
  const found: TarEntry[] = [];
  const extract = tar.extract();
  const done = new Promise<void>((resolve, reject) => {
    extract.on('entry', (header, stream, next) => {
      const parts: Buffer[] = [];
      stream.on('data', (d: unknown) => parts.push(d as Buffer));
      stream.on('end', () => {
        found.push({ name: header.name, size: header.size ?? -1, mtime: header.mtime?.getTime() ?? 0, text: Buffer.concat(parts).toString('utf8') });
        next();
      });
    });
    extract.on('finish', resolve).on('error', reject);
  });
  Readable.from(fs.readFileSync(file)).pipe(createGunzip()).pipe(extract);
  await done;
  return found;
}
