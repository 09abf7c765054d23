import fs from 'node:fs';
import http from 'node:http';
import { WriteBatch } from '../src/http/write-batch.js';

/**
 * The physical limit for this stack: node:http answering with fixed bytes and headers from
 * memory. argv[2] names a JSON file {headers, body (base64)}; the port goes to stdout. With
 * argv[3] = 'batched', answers are written as the service writes them (src/http/write-batch.ts).
 */
const { headers, body } = JSON.parse(fs.readFileSync(process.argv[2]!, 'utf8')) as { headers: Record<string, string>; body: string };
const bytes = Buffer.from(body, 'base64');
const batch = process.argv[3] === 'batched' ? new WriteBatch((err) => console.error(err)) : undefined;
const server = http.createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  req.resume();
  const answer = () => {
    res.writeHead(200, { ...headers, 'content-length': bytes.length });
    res.end(bytes);
  };
  if (batch) batch.send(answer);
  else answer();
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
