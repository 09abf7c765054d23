import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import pino from 'pino';
import { BodiesOnRender, THREAD_BODY_BYTES } from '../../../../../src/modules/page/snapshot/bodies-on-render.js';
import { packPlainBody } from '../../../../../src/modules/page/snapshot/record-format.js';
import { inThread, type RecordFormatter } from '../../../../../src/modules/page/snapshot/record-formatter.js';
import type { Request, RequestContext } from '../../../../../src/router/types.js';

/** Internal requests answered by `answer`; `seen` records them. */
function context(seen: Request[], answer: (req: Request) => Promise<{ status: number; body: unknown }>): RequestContext {
  return { requestId: 't', depth: 0, admin: true, external: false, client: () => undefined, log: pino({ level: 'silent' }), request: async (req) => (seen.push(req), answer(req)) };
}

const render = { title: 'Page', rev: 7, tid: '11111111-0000-1000-8000-000000000000' };
const parts = { html: Buffer.from('<p id="mwAA">text</p>'), dataMw: Buffer.from('{"ids":{}}'), wikitext: Buffer.from("'''text'''") };

/** A long article's parts: paragraphs and templates (data-mw by id), non-ASCII text, past the size made on a thread. */
function longParts() {
  const paragraphs: string[] = [];
  const ids: Record<string, unknown> = {};
  for (let i = 0; Buffer.byteLength(paragraphs.join('')) < THREAD_BODY_BYTES; i++) {
    paragraphs.push(`<p id="mw${i}">Łódź "quoted" \\ text ${i}</p><span typeof="mw:Transclusion" id="mwT${i}">x</span>`);
    ids[`mwT${i}`] = { parts: [{ template: { target: { wt: `T${i}` }, params: {}, i: 0 } }] };
  }
  return { html: Buffer.from(`<body>${paragraphs.join('')}</body>`), dataMw: Buffer.from(JSON.stringify({ ids })), wikitext: Buffer.from('Łódź '.repeat(1000)) };
}

/** Where the bodies went: the thread's, counted, made here. */
function countingThread(): RecordFormatter & { plain: number } {
  const counted = { ...inThread, plain: 0, packPlain: async (p: Parameters<RecordFormatter['packPlain']>[0]) => (counted.plain++, inThread.packPlain(p)) };
  return counted;
}

describe('snapshot bodies made as a latest render is stored', () => {
  it('are stored under the render, as one gzip member of the record\'s end', async () => {
    const seen: Request[] = [];
    await new BodiesOnRender(pino({ level: 'silent' })).made(context(seen, async () => ({ status: 201, body: {} })), 'wiki.test', render, parts);
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.method, 'PUT');
    assert.match(seen[0]!.uri, /\/snapshot_bodies\//);
    const attributes = (seen[0]!.body as { attributes: Record<string, unknown> }).attributes;
    assert.deepEqual([attributes.title, attributes.rev, attributes.tid], [render.title, render.rev, render.tid]);
    const json = gunzipSync(attributes.body as Buffer).toString('utf8');
    assert.equal(json, `${JSON.stringify({ html: '<p id="mwAA">text</p>', wikitext: "'''text'''" })}}\n`);
    assert.equal(attributes.bytes, Buffer.byteLength(json));
  });

  it('failing to be stored, fail nothing else: the failure is logged, and a snapshot makes the body', async () => {
    const warnings: unknown[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line)) });
    const seen: Request[] = [];
    await new BodiesOnRender(log).made(context(seen, async () => Promise.reject(new Error('storage down'))), 'wiki.test', render, parts);
    assert.equal(seen.length, 1);
    assert.equal(warnings.length, 1);
    assert.match(JSON.stringify(warnings[0]), /snapshot body failed/);
  });

  it('are not made with snapshot_bodies: snapshot', async () => {
    const seen: Request[] = [];
    await new BodiesOnRender(pino({ level: 'silent' }), false).made(context(seen, async () => ({ status: 201, body: {} })), 'wiki.test', render, parts);
    assert.deepEqual(seen, []);
  });

  it("of a long article are made on a worker thread (the event loop left to requests), the same bytes as made here", async () => {
    const long = longParts();
    const seen: Request[] = [];
    const bodies = new BodiesOnRender(pino({ level: 'silent' }));
    try {
      await bodies.made(context(seen, async () => ({ status: 201, body: {} })), 'wiki.test', render, long);
    } finally {
      await bodies.close();
    }
    const attributes = (seen[0]!.body as { attributes: Record<string, unknown> }).attributes;
    const here = await packPlainBody(long);
    assert.ok(Buffer.isBuffer(attributes.body), 'stored as storage answers bytes');
    assert.deepEqual([Buffer.compare(attributes.body as Buffer, Buffer.from(here.gz)), attributes.bytes, attributes.wikitext_bytes], [0, here.bytes, here.wikitextBytes]);
  });

  it('go to the thread from a long article on, not before', async () => {
    const thread = countingThread();
    const bodies = new BodiesOnRender(pino({ level: 'silent' }), true, thread);
    const ctx = context([], async () => ({ status: 201, body: {} }));
    await bodies.made(ctx, 'wiki.test', render, parts);
    assert.equal(thread.plain, 0);
    await bodies.made(ctx, 'wiki.test', render, longParts());
    assert.equal(thread.plain, 1);
  });
});
