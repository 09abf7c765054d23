import fs from 'node:fs';
import { Readable } from 'node:stream';
import type { Response } from '../../router/types.js';
import { HttpError } from '../../util/errors.js';
import type { Download, Segment } from '../../modules/page/door.js';

/** The one byte range a `Range` header asks of `size` bytes; undefined: the whole (absent, or a form not served: several ranges). */
function rangeOf(header: string | undefined, size: number): { start: number; end: number } | undefined {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (!m[1] && !m[2])) return undefined;
  let start: number;
  let end: number;
  if (!m[1]) {
    // The last N bytes.
    const n = Number(m[2]);
    if (n === 0) throw unsatisfiable(size);
    start = Math.max(0, size - n);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] ? Math.min(Number(m[2]), size - 1) : size - 1;
    if (m[2] && Number(m[2]) < start) return undefined; // not a valid range: ignored (RFC 9110 §14.1.1)
  }
  if (start >= size) throw unsatisfiable(size);
  return { start, end };
}

const unsatisfiable = (size: number) => new HttpError(416, 'range-not-satisfiable', `The range asked for starts past the end of the ${size} bytes.`, { headers: { 'content-range': `bytes */${size}` } });

/** The bytes [start, end] of the segments, streamed (the files read as they are sent). */
function streamOf(segments: Segment[], start: number, end: number): Readable {
  async function* pieces() {
    let at = 0;
    for (const segment of segments) {
      const length = 'bytes' in segment ? segment.bytes.length : segment.end - segment.start;
      const from = Math.max(start, at);
      const to = Math.min(end + 1, at + length);
      if (from < to) {
        if ('bytes' in segment) yield segment.bytes.subarray(from - at, to - at);
        else yield* fs.createReadStream(segment.file, { start: segment.start + from - at, end: segment.start + to - at - 1 });
      }
      at += length;
    }
  }
  return Readable.from(pieces(), { objectMode: false });
}

/**
 * A download as HTTP answers it: whole (200) or one range (206, for resumed and parallel
 * downloads), `If-Range` honoured, a range past the end 416, HEAD without a body.
 */
export function serveDownload(download: Download, headers: Record<string, string | undefined>, method: string, filename: string): Response {
  const ifRange = headers['if-range'];
  const range = ifRange && ifRange !== download.etag ? undefined : rangeOf(headers.range, download.size);
  const start = range?.start ?? 0;
  const end = range?.end ?? download.size - 1;
  const out: Record<string, string> = {
    'content-type': 'application/gzip',
    'content-length': String(Math.max(0, end - start + 1)),
    'accept-ranges': 'bytes',
    etag: download.etag,
    'last-modified': new Date(download.modified).toUTCString(),
    'content-disposition': `attachment; filename="${filename}"`,
    'cache-control': 'no-cache',
  };
  if (range) out['content-range'] = `bytes ${start}-${end}/${download.size}`;
  if (headers['if-none-match'] && headers['if-none-match'].split(/\s*,\s*/).includes(download.etag)) {
    return { status: 304, headers: { etag: download.etag, 'cache-control': 'no-cache' } };
  }
  // A stream either way (a HEAD's is not read): the length stays the one given here.
  if (method === 'HEAD' || download.size === 0) return { status: range ? 206 : 200, headers: out, body: Readable.from([]) };
  return { status: range ? 206 : 200, headers: out, body: streamOf(download.segments, start, end) };
}
