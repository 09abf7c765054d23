import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { freshDomain, parsoidRequests, processConfig, request, sleep, startProcess, tempDir } from '../helpers.js';
import { WIKI_URL } from '../wiki.js';

describe('a cold miss of a page\'s latest content (rendering starts while its metadata is written)', () => {
  const domain = freshDomain();
  let child: ChildProcess;
  let base: string;

  before(async () => {
    const p = startProcess(processConfig(tempDir(), domain, WIKI_URL));
    child = p.child;
    base = `http://127.0.0.1:${await p.port}`;
  });
  after(() => {
    child.kill('SIGTERM');
  });

  it('makes one Parsoid request, and the page then points at the render it served', async () => {
    for (const title of ['Bodmin', 'Antique_(band)']) {
      const before = await parsoidRequests(base, domain);
      const answers = await Promise.all(Array.from({ length: 5 }, () => request(`${base}/${domain}/v1/page/${title}/html`)));
      for (const a of answers) assert.equal(a.status, 200, a.text.slice(0, 300));
      const etags = new Set(answers.map((a) => a.headers.etag));
      assert.equal(etags.size, 1, 'every answer is the same render');
      assert.equal((await parsoidRequests(base, domain)) - before, 1, 'the early render and the read\'s are one');
      const tid = JSON.parse(answers[0]!.headers.etag!.replace(/^W\//, '')).split('/')[1];
      // The render's pointers are written after it is stored, which follows the answer.
      let listed: { title: string; tid: string | null } | undefined;
      for (let i = 0; i < 40 && listed?.tid !== tid; i++) {
        await sleep(50);
        listed = (await request(`${base}/${domain}/v1/page/`)).json.items.find((p: { title: string }) => p.title === title);
      }
      assert.equal(listed?.tid, tid, 'the listing names the render served as the latest');
      const again = await request(`${base}/${domain}/v1/page/${title}/html`);
      assert.equal(again.headers.etag, answers[0]!.headers.etag);
      assert.equal(await parsoidRequests(base, domain), before + 1, 'served from storage afterwards');
    }
  });
});
