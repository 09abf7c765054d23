import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { tempDir } from './helpers.js';
import { waitFor, WIKI_URL } from './wiki.js';

/** The documented nginx rule for MediaWiki's REST API (docs/rest-php.md), as an operator copies it. */
async function readmeNginxRule(): Promise<{ http: string; server: string }> {
  const readme = await readFile('docs/rest-php.md', 'utf8');
  const block = /```nginx\n([\s\S]*?)```/.exec(readme);
  assert.ok(block, 'docs/rest-php.md shows the nginx rule');
  const [http, server] = block[1]!.split('# in the wiki\'s server {}');
  return { http: http!.replace('# in http {}', ''), server: server! };
}

export const freePort = () => new Promise<number>((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => {
    const { port } = s.address() as net.AddressInfo;
    s.close(() => resolve(port));
  });
});

/**
 * nginx in front of the real wiki with the documented rule (docs/rest-php.md) for MediaWiki's REST API (the wiki here at
 * the root rather than `/w/`), sending those routes to the service at `serviceBase`.
 */
export async function startNginxFront(serviceBase: string): Promise<{ front: string; stop: () => Promise<void> }> {
  const dir = tempDir();
  const port = await freePort();
  const service = new URL(serviceBase);
  const rule = await readmeNginxRule();
  const adapt = (text: string) => text.replace(/\/w\//g, '/').replace(/\^\/w\\\//g, '^/').replace(/wiki\.example/g, 'wiki.test').replace('127.0.0.1:7231', service.host);
  const wiki = new URL(WIKI_URL);
  await writeFile(path.join(dir, 'nginx.conf'), `
user root;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fastcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
  client_max_body_size 64m;
  ${adapt(rule.http)}
  server {
    listen 127.0.0.1:${port};
    ${adapt(rule.server)}
    location / { proxy_pass http://${wiki.host}; }
  }
}
`);
  const nginx = spawn('/usr/sbin/nginx', ['-c', path.join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  nginx.stderr!.on('data', (d) => (stderr += d));
  const front = `http://127.0.0.1:${port}`;
  await waitFor('nginx answering', 10_000, async () => {
    if (nginx.exitCode !== null) throw new Error(`nginx exited: ${stderr}`);
    return (await fetch(`${front}/api.php?action=query&format=json`).then((r) => r.status === 200, () => false)) || undefined;
  });
  return {
    front,
    stop: async () => {
      if (nginx.exitCode !== null) return;
      const exited = new Promise((r) => nginx.once('exit', r));
      nginx.kill('SIGTERM');
      await exited;
    },
  };
}
