import zlib from 'node:zlib';
import { toHtml2, type Html2Parts } from './html-versions.js';

/** Bytes come to a thread as plain Uint8Arrays: Buffers again, for their UTF-8 decoding. */
const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/**
 * A worker thread of `Html2Cache`: a render's 2.x HTML, gzipped as `compress` gzips (the same
 * bytes as made on the main thread).
 */
export default function html2Gzipped(parts: Html2Parts): Uint8Array {
  const plain = (bytes: Uint8Array) => (parts.gzipped ? zlib.gunzipSync(asBuffer(bytes)) : asBuffer(bytes));
  const html = toHtml2(plain(parts.html).toString('utf8'), JSON.parse(plain(parts.dataMw).toString('utf8')) as { ids?: Record<string, unknown> });
  return zlib.gzipSync(Buffer.from(html), { level: 6 });
}
