import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ADMIN_TOKEN, request, tempDir } from '../helpers.js';

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/bin/main.js');

function startMain(env: Record<string, string>) {
  const child = spawn(process.execPath, [MAIN], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const listening = new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /"port":(\d+)[^\n]*"msg":"listening"/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code}: ${out}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { child, listening, exited, output: () => out };
}

// Each case its own process, data dir and port: run at once.
describe('the service process', { concurrency: true }, () => {
  it('starts with a YAML config and env overrides, serves the spec, and stores under DATA_DIR', async () => {
    const dir = tempDir();
    const config = path.join(dir, 'config.yaml');
    fs.writeFileSync(config, 'wikis:\n  wiki.example:\n    action_api: http://127.0.0.1:1/api.php\n    rest_api: http://127.0.0.1:1/rest.php\nlog_level: info\n');
    const { child, listening, exited } = startMain({ CONFIG: config, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dir });
    const port = await listening;
    const spec = await request(`http://127.0.0.1:${port}/wiki.example/v1/?spec`);
    assert.equal(spec.status, 200);
    assert.equal(spec.json.openapi, '3.1.0');
    assert.deepEqual((await request(`http://127.0.0.1:${port}/`)).json, { items: ['wiki.example'] });
    assert.ok(fs.existsSync(path.join(dir, 'wikistore.sqlite3')));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
  });

  it('finishes an in-flight request on SIGTERM before exiting', async () => {
    const dir = tempDir();
    const { child, listening, exited } = startMain({ PORT: '0', DATA_DIR: dir, ADMIN_TOKEN, CONFIG: '/dev/null' });
    const port = await listening;
    const body = JSON.stringify({ attributes: { k: 'string' }, index: [{ attribute: 'k', type: 'hash' }] });
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    let response = '';
    socket.on('data', (c: Buffer) => (response += c.toString()));
    const closed = new Promise((r) => socket.once('close', r));
    socket.write(
      `PUT /en.wikipedia.org/sys/table/t HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 10)}`,
    );
    await new Promise((r) => setTimeout(r, 200));
    child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    socket.write(body.slice(10));
    await closed;
    assert.match(response, /^HTTP\/1.1 201/);
    assert.equal(await exited, 0);
  });

  it('restarts a worker killed with SIGKILL, logs and counts it, and serves again', async () => {
    const dir = tempDir();
    // A fixed port: with port 0 a restarted worker would get a new random one.
    const free = net.createServer();
    await new Promise<void>((r) => free.listen(0, '127.0.0.1', r));
    const fixed = (free.address() as net.AddressInfo).port;
    await new Promise((r) => free.close(r));
    const { child, listening, exited, output } = startMain({ PORT: String(fixed), DATA_DIR: dir, CONFIG: '/dev/null', WORKERS: '1', LOG_LEVEL: 'info' });
    const port = await listening;
    const workerPid = Number(/"pid":(\d+)[^\n]*"msg":"listening"/.exec(output())![1]);
    assert.notEqual(workerPid, child.pid, 'the service runs in a worker, not in the supervisor');
    assert.equal((await request(`http://127.0.0.1:${port}/_health`)).status, 200);
    process.kill(workerPid, 'SIGKILL');
    const deadline = Date.now() + 15_000;
    let restartedPid: number | undefined;
    while (Date.now() < deadline && restartedPid === undefined) {
      await new Promise((r) => setTimeout(r, 100));
      const pids = [...output().matchAll(/"pid":(\d+)[^\n]*"msg":"listening"/g)].map((m) => Number(m[1]));
      restartedPid = pids.find((p) => p !== workerPid);
    }
    assert.ok(restartedPid, 'a new worker started listening');
    assert.match(output(), /"signal":"SIGKILL"[^\n]*"msg":"worker died; restarting it"/);
    const health = await request(`http://127.0.0.1:${port}/_health`);
    assert.equal(health.status, 200);
    const metrics = await request(`http://127.0.0.1:${port}/metrics`);
    assert.match(metrics.text, /^worker_restarts_total 1$/m);
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
  });
});
