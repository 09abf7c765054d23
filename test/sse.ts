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

