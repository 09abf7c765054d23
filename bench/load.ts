import fs from 'node:fs';
import net from 'node:net';

/**
 * A closed-loop HTTP/1.1 load generator over raw keep-alive sockets, run as its own process
 * (pinned to the core the server does not use). Each connection sends a request as soon as the
 * previous answer is complete. Connections are opened and warmed before measuring starts, so the
 * percentiles describe the steady state: wrk, used before, put connection start-up delays of its
 * own (up to half a second, never seen by the server, which answered every connection within
 * 45 ms) into short runs' p99.
 *
 * argv[2] is a JSON LoadSpec, or `-` to read it from stdin; one JSON LoadResult line goes to stdout.
 */
export interface LoadSpec {
  url: string;
  /** Paths sent in turn instead of the URL's own (reads spread over many keys, as a store at scale sees them). */
  paths?: string[];
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  seconds: number;
  warmupSeconds: number;
}

export interface LoadResult {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  /** Answers with a status of 400 or more, and connections that failed. */
  errors: number;
  firstError?: string;
}

const HEADER_END = Buffer.from('\r\n\r\n');
const CRLF = Buffer.from('\r\n');

function requestBytes(spec: LoadSpec, url: URL, path = `${url.pathname}${url.search}`): Buffer {
  const body = spec.body === undefined ? undefined : Buffer.from(spec.body);
  const lines = [`${spec.method ?? 'GET'} ${path} HTTP/1.1`, `host: ${url.host}`];
  for (const [k, v] of Object.entries(spec.headers ?? {})) lines.push(`${k}: ${v}`);
  if (body) lines.push(`content-length: ${body.length}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), body ?? Buffer.alloc(0)]);
}

/** Where a response that starts at 0 in `buf` ends, or -1 while incomplete (content-length or chunked). */
function responseEnd(buf: Buffer, head: { end: number; length: number; chunked: boolean; close: boolean; status: number } | undefined): number {
  if (!head) return -1;
  if (!head.chunked) return buf.length >= head.end + head.length ? head.end + head.length : -1;
  let at = head.end;
  for (;;) {
    const eol = buf.indexOf(CRLF, at);
    if (eol < 0) return -1;
    const size = parseInt(buf.toString('latin1', at, eol), 16);
    if (size === 0) {
      const trailerEnd = buf.indexOf(HEADER_END, eol);
      if (trailerEnd === eol) return eol + 4;
      return trailerEnd < 0 ? -1 : trailerEnd + 4;
    }
    at = eol + 2 + size + 2;
    if (buf.length < at) return -1;
  }
}

function parseHead(buf: Buffer) {
  const end = buf.indexOf(HEADER_END);
  if (end < 0) return undefined;
  const text = buf.toString('latin1', 0, end);
  const status = Number(text.slice(9, 12));
  const length = Number(/\r\ncontent-length: *(\d+)/i.exec(text)?.[1] ?? 0);
  return { end: end + 4, length, status, chunked: /\r\ntransfer-encoding: *chunked/i.test(text), close: /\r\nconnection: *close/i.test(text) };
}

async function run(spec: LoadSpec): Promise<LoadResult> {
  const url = new URL(spec.url);
  const requests = spec.paths?.length ? spec.paths.map((p) => requestBytes(spec, url, p)) : [requestBytes(spec, url)];
  let turn = 0;
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  let phase: 'warmup' | 'measure' | 'stop' = 'warmup';
  const fail = (why: string) => {
    errors++;
    firstError ??= why;
  };

  const connection = (): Promise<void> =>
    new Promise((resolve) => {
      let socket: net.Socket;
      let chunks: Buffer[] = [];
      let size = 0;
      let head: ReturnType<typeof parseHead>;
      let sentAt = 0;
      const send = () => {
        if (phase === 'stop') {
          socket.destroy();
          return resolve();
        }
        sentAt = performance.now();
        socket.write(requests[turn++ % requests.length]!);
      };
      const open = () => {
        chunks = [];
        size = 0;
        head = undefined;
        socket = net.connect(Number(url.port || 80), url.hostname);
        socket.setNoDelay(true);
        socket.on('connect', send);
        socket.on('data', (chunk: Buffer) => {
          // Bodies of a known length are counted, not copied together: a generator that
          // concatenated every chunk of a 50 KB answer was slower than the bare server it measured.
          chunks.push(chunk);
          size += chunk.length;
          const whole = () => (chunks.length === 1 ? chunks[0]! : (chunks = [Buffer.concat(chunks)])[0]!);
          for (;;) {
            head ??= parseHead(whole());
            if (!head) return;
            const end = head.chunked ? responseEnd(whole(), head) : head.end + head.length;
            if (end < 0 || size < end) return;
            if (phase === 'measure') {
              latencies.push(performance.now() - sentAt);
              if (head.status >= 400) fail(`status ${head.status}`);
            }
            const close = head.close;
            const rest = size - end;
            chunks = rest > 0 ? [whole().subarray(end)] : [];
            size = rest;
            head = undefined;
            if (close) {
              socket.removeAllListeners();
              socket.destroy();
              return open();
            }
            send();
            if (size === 0) return;
          }
        });
        socket.on('error', (e) => {
          if (phase === 'measure') fail(e.message);
          socket.removeAllListeners();
          socket.destroy();
          if (phase === 'stop') resolve();
          else setTimeout(open, 10);
        });
      };
      open();
    });

  const done = Promise.all(Array.from({ length: spec.connections }, connection));
  await new Promise((r) => setTimeout(r, spec.warmupSeconds * 1000));
  phase = 'measure';
  const started = performance.now();
  await new Promise((r) => setTimeout(r, spec.seconds * 1000));
  const elapsed = (performance.now() - started) / 1000;
  phase = 'stop';
  const sorted = Float64Array.from(latencies).sort();
  await Promise.race([done, new Promise((r) => setTimeout(r, 2000))]);
  const at = (p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]! : NaN);
  return { rps: sorted.length / elapsed, p50Ms: at(0.5), p99Ms: at(0.99), p999Ms: at(0.999), errors, firstError };
}

if (process.argv[2]) {
  const spec = process.argv[2] === '-' ? fs.readFileSync(0, 'utf8') : process.argv[2];
  const result = await run(JSON.parse(spec) as LoadSpec);
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}
