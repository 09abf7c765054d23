import fs from 'node:fs';
import http from 'node:http';

/**
 * The physical limit for this stack: node:http answering with fixed bytes and headers from
 * memory. argv[2] names a JSON file {headers, body (base64)}; the port goes to stdout.
 */
const { headers, body } = JSON.parse(fs.readFileSync(process.argv[2]!, 'utf8')) as { headers: Record<string, string>; body: string };
const bytes = Buffer.from(body, 'base64');
const server = http.createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  req.resume();
  res.writeHead(200, { ...headers, 'content-length': bytes.length });
  res.end(bytes);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
