import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { admin, freshDomain, processConfig, request, startProcess, tempDir } from './helpers.js';
import { WIKI_URL } from './wiki.js';

async function parsoidRequests(base: string, domain: string): Promise<number> {
  const text = (await request(`${base}/metrics`)).text;
  const m = new RegExp(`wiki_requests_total\\{domain="${domain.replace(/\./g, '\\.')}",endpoint="parsoid"\\} (\\d+)`).exec(text);
  return m ? Number(m[1]) : 0;
}

describe('renders across processes sharing the storage (workers, or several machines)', () => {
  const domain = freshDomain();
  const dir = tempDir();
  const children: ChildProcess[] = [];
  const bases: string[] = [];

  before(async () => {
    for (let i = 0; i < 2; i++) {
      const p = startProcess(processConfig(dir, domain, WIKI_URL));
      children.push(p.child);
      bases.push(`http://127.0.0.1:${await p.port}`);
    }
  });
  after(() => {
    for (const c of children) c.kill('SIGTERM');
  });

  it('makes one Parsoid request for a revision both miss at once, and both serve that one render', async () => {
    const title = 'Bodmin';
    const before = (await parsoidRequests(bases[0]!, domain)) + (await parsoidRequests(bases[1]!, domain));
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => request(`${bases[i % 2]}/${domain}/v1/page/${title}/html`)));
    for (const a of answers) assert.equal(a.status, 200, a.text.slice(0, 300));
    assert.equal(new Set(answers.map((a) => a.headers.etag)).size, 1, 'every answer is the same render');
    const after = (await parsoidRequests(bases[0]!, domain)) + (await parsoidRequests(bases[1]!, domain));
    assert.equal(after - before, 1, 'one Parsoid request between the two processes');
    const stored = await request(`${bases[0]}/${domain}/sys/table/parsoid/_query`, {
      method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: JSON.stringify({ attributes: { title }, proj: ['tid'] }),
    });
    assert.equal(stored.status, 200, stored.text);
    assert.equal(stored.json.items.length, 1, 'one render stored');
  });
});
