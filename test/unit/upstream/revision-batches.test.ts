import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { ActionApi, ApiPage } from '../../../src/upstream/action-api.js';
import { RevisionBatches } from '../../../src/upstream/revision-batches.js';
import { HttpError } from '../../../src/util/errors.js';

/** A wiki whose revision queries wait until released, recording the ids each one asked. */
function heldWiki(missing = new Set<number>()) {
  const queries: number[][] = [];
  const releases: ((fail?: Error) => void)[] = [];
  const api = {
    revisions: (revids: readonly number[]) => {
      queries.push([...revids]);
      return new Promise<Map<number, ApiPage>>((resolve, reject) => {
        releases.push((fail) => {
          if (fail) return reject(fail);
          const pages = new Map<number, ApiPage>();
          for (const revid of revids) if (!missing.has(revid)) pages.set(revid, { ns: 0, title: `Page ${revid}`, revisions: [{ revid }] } as ApiPage);
          resolve(pages);
        });
      });
    },
  } as unknown as ActionApi;
  return { api, queries, releases };
}

const turn = () => new Promise((r) => setImmediate(r));

it('asks a revision alone while the wiki is idle, and those asked while two queries are under way together, 50 a query', async () => {
  const wiki = heldWiki(new Set([105]));
  const batches = new RevisionBatches(() => wiki.api);
  const first = batches.describe('w.test', 1);
  await turn();
  assert.deepEqual(wiki.queries, [[1]], 'the first goes at once, alone');
  const second = batches.describe('w.test', 2);
  await turn();
  assert.deepEqual(wiki.queries.length, 2, 'a second query while one is under way');
  const waiting = Array.from({ length: 120 }, (_, i) => batches.describe('w.test', 100 + i));
  await turn();
  assert.equal(wiki.queries.length, 2, 'the rest wait while two queries are under way');
  wiki.releases[0]!();
  assert.equal((await first)?.revisions?.[0]?.revid, 1);
  await turn();
  assert.deepEqual(wiki.queries.slice(2).map((q) => q.length), [50], 'once one ends, the next 50 go together');
  wiki.releases[1]!();
  await second;
  await turn();
  assert.deepEqual(wiki.queries.slice(2).map((q) => q.length), [50, 50]);
  wiki.releases[2]!();
  await turn();
  assert.deepEqual(wiki.queries.slice(2).map((q) => q.length), [50, 50, 20]);
  wiki.releases[3]!();
  wiki.releases[4]!();
  const answers = await Promise.all(waiting);
  assert.equal(answers[5], undefined, 'a revision the wiki has not is undefined');
  assert.equal(answers[6]?.revisions?.[0]?.revid, 106, 'each is answered with its own revision');
  assert.deepEqual(wiki.queries.flat().sort((a, b) => a - b), [1, 2, ...Array.from({ length: 120 }, (_, i) => 100 + i)], 'each asked once');
});

it('fails the revisions of a query that failed, and asks the next ones anew', async () => {
  const wiki = heldWiki();
  const batches = new RevisionBatches(() => wiki.api);
  const failing = [batches.describe('w.test', 1), batches.describe('w.test', 2)];
  await turn();
  wiki.releases[0]!(new Error('the wiki is down'));
  for (const answer of failing) await assert.rejects(answer, /the wiki is down/);
  const later = batches.describe('w.test', 1);
  await turn();
  wiki.releases[1]!();
  assert.equal((await later)?.revisions?.[0]?.revid, 1);
  assert.deepEqual(wiki.queries, [[1, 2], [1]]);
});

it("keeps each wiki's batches its own", async () => {
  const a = heldWiki();
  const b = heldWiki();
  const batches = new RevisionBatches((domain) => (domain === 'a.test' ? a.api : b.api));
  const answers = [batches.describe('a.test', 1), batches.describe('b.test', 2)];
  await turn();
  assert.deepEqual([a.queries, b.queries], [[[1]], [[2]]]);
  a.releases[0]!();
  b.releases[0]!();
  assert.deepEqual((await Promise.all(answers)).map((p) => p?.title), ['Page 1', 'Page 2']);
});

it('refuses revisions beyond 1,024 waiting for a wiki, as the wiki\'s own queue refuses (503, Retry-After)', async () => {
  const wiki = heldWiki();
  const batches = new RevisionBatches(() => wiki.api);
  const waiting = Array.from({ length: 1024 }, (_, i) => batches.describe('w.test', i + 1));
  await assert.rejects(batches.describe('w.test', 5000), (e: unknown) => e instanceof HttpError && e.status === 503 && e.headers?.['retry-after'] === '5');
  for (let released = 0; released < wiki.queries.length || released === 0; released++) {
    await turn();
    wiki.releases[released]!();
  }
  assert.equal((await Promise.all(waiting)).length, 1024);
  const later = batches.describe('w.test', 5000);
  await turn();
  wiki.releases.at(-1)!();
  assert.equal((await later)?.revisions?.[0]?.revid, 5000, 'asked once those waiting were answered');
});
