import http from 'node:http';

export interface Sse {
  id: string;
  event: string;
  data: Record<string, any>;
}

/** An EventSource's reading of a stream: its events as they come, and a way to hang up. */
export function listen(url: string, headers: Record<string, string> = {}): { events: Sse[]; status: Promise<{ status: number; headers: http.IncomingHttpHeaders }>; close: () => void } {
  const events: Sse[] = [];
  let buffer = '';
  let req!: http.ClientRequest;
  const status = new Promise<{ status: number; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
    req = http.get(url, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      resolve({ status: res.statusCode!, headers: res.headers });
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const fields = Object.fromEntries(block.split('\n').filter((l) => !l.startsWith(':')).map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]));
          if (fields.data) events.push({ id: fields.id!, event: fields.event!, data: JSON.parse(fields.data) });
        }
      });
      res.on('error', () => undefined);
    });
    req.on('error', reject);
  });
  return { events, status, close: () => req.destroy() };
}


/**
 * A Realtime client's reading of an NDJSON stream, as Enterprise's SDK reads it: a request (a GET
 * with a JSON body, as the SDK sends it, or a POST), then one JSON record a line.
 */
export function listenLines(url: string, body: unknown, method = 'GET'): { lines: Record<string, any>[]; status: Promise<{ status: number; headers: http.IncomingHttpHeaders; text?: string }>; close: () => void } {
  const lines: Record<string, any>[] = [];
  let buffer = '';
  let req!: http.ClientRequest;
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const status = new Promise<{ status: number; headers: http.IncomingHttpHeaders; text?: string }>((resolve, reject) => {
    req = http.request(url, { method, headers: { accept: 'application/x-ndjson', ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}) } }, (res) => {
      res.setEncoding('utf8');
      if (res.statusCode !== 200) {
        let text = '';
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
        return;
      }
      resolve({ status: res.statusCode!, headers: res.headers });
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (let end = buffer.indexOf('\n'); end >= 0; end = buffer.indexOf('\n')) {
          lines.push(JSON.parse(buffer.slice(0, end)));
          buffer = buffer.slice(end + 1);
        }
      });
      res.on('error', () => undefined);
    });
    req.on('error', reject);
    req.end(payload);
  });
  return { lines, status, close: () => req.destroy() };
}
