import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../helpers.js';

// A file of its own beside process.test.ts: each starts processes and waits on them, and the two
// run at once.
const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/bin/main.js');

/** Runs the service process to its end: its exit code and what it printed on stderr. */
function runToExit(env: Record<string, string>, timeoutMs = 30_000): Promise<{ code: number | null; stderr: string; ms: number }> {
  const started = Date.now();
  const child = spawn(process.execPath, [MAIN], { env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve) => child.once('exit', (code) => {
    clearTimeout(timer);
    resolve({ code, stderr: stderr.trim(), ms: Date.now() - started });
  }));
}

// Each case its own process, files and port: run at once (the storage case waits seconds on purpose).
describe('start-up mistakes: one line naming what to change, never a restart loop', { concurrency: true }, () => {
  const configFile = (text: string) => {
    const file = path.join(tempDir(), 'config.yaml');
    fs.writeFileSync(file, text);
    return file;
  };

  it('refuses a setting that does not exist, naming the nearest one', async () => {
    for (const [text, expected] of [
      ['listen_port: 8080\n', /listen_port is not a setting; did you mean listen\?/],
      ['wikis_typo: {}\n', /wikis_typo is not a setting; did you mean wikis\?/],
      ['listen:\n  prot: 8080\n', /listen\.prot is not a setting; did you mean listen\.port\?/],
      ['wikis:\n  w.example:\n    action_api: http://x/api.php\n    rest_api: http://x/rest.php\n    max_lag: 5\n', /wikis\.w\.example\.max_lag is not a setting; did you mean wikis\.w\.example\.maxlag\?/],
    ] as const) {
      const file = configFile(text);
      const { code, stderr } = await runToExit({ CONFIG: file, PORT: '0', DATA_DIR: tempDir() });
      assert.equal(code, 2, stderr);
      assert.match(stderr, expected);
      assert.ok(stderr.includes(file), 'names the file');
      assert.equal(stderr.split('\n').length, 1, `one line: ${stderr}`);
    }
  });

  it('names the file and the place of a YAML syntax error', async () => {
    const file = configFile('listen:\n  port: 8080\n   host: x\n');
    const { code, stderr } = await runToExit({ CONFIG: file, DATA_DIR: tempDir() });
    assert.equal(code, 2);
    assert.match(stderr, new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: .*\\(\\d+:\\d+\\)`));
    assert.equal(stderr.split('\n').length, 1, stderr);
  });

  it('exits at once when its port is in use, with workers too, instead of restarting forever', async () => {
    const taken = net.createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = String((taken.address() as net.AddressInfo).port);
    try {
      for (const workers of ['0', '2']) {
        const { code, stderr, ms } = await runToExit({ CONFIG: '/dev/null', PORT: port, HOST: '127.0.0.1', WORKERS: workers, DATA_DIR: tempDir() });
        assert.equal(code, 78, stderr);
        assert.match(stderr, new RegExp(`Port ${port} on 127\\.0\\.0\\.1 is in use.*listen\\.port`));
        assert.doesNotMatch(stderr, /\n\s+at /, 'no stack trace');
        assert.ok(ms < 10_000, `at once (${ms} ms)`);
      }
    } finally {
      taken.close();
    }
  });

  it('says which storage it cannot reach or write, and exits', async () => {
    const unwritable = await runToExit({ CONFIG: '/dev/null', PORT: '0', DATA_DIR: '/dev/null/wikistore' });
    assert.equal(unwritable.code, 78, unwritable.stderr);
    assert.match(unwritable.stderr, /^Cannot write the SQLite database .*DATA_DIR/);
    assert.equal(unwritable.stderr.split('\n').length, 1, unwritable.stderr);
    const file = configFile('storage:\n  backend: postgres\n  url: postgres://someone:secret@127.0.0.1:1/none\n');
    const unreachable = await runToExit({ CONFIG: file, PORT: '0', DATA_DIR: tempDir() });
    assert.equal(unreachable.code, 78, unreachable.stderr);
    const lines = unreachable.stderr.split('\n');
    assert.match(lines.at(-1)!, /^Storage is not reachable: PostgreSQL at postgres:\/\/127\.0\.0\.1:1\/none/);
    assert.ok(lines.length >= 2 && lines.slice(0, -1).every((l) => /Trying again \(\d of 5\)/.test(l)), 'it waited for it first, saying so');
    assert.doesNotMatch(unreachable.stderr, /secret/, 'the password is not printed');
  });
});
