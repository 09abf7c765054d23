import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import pino from 'pino';
import { BodiesOnRender } from '../../../../../src/modules/page/snapshot/bodies-on-render.js';
import type { Request, RequestContext } from '../../../../../src/router/types.js';

/** Internal requests answered by `answer`; `seen` records them. */
function context(seen: Request[], answer: (req: Request) => Promise<{ status: number; body: unknown }>): RequestContext {
  return { requestId: 't', depth: 0, admin: true, external: false, log: pino({ level: 'silent' }), request: async (req) => (seen.push(req), answer(req)) };
}

const render = { title: 'Page', rev: 7, tid: '11111111-0000-1000-8000-000000000000' };
const parts = { html: Buffer.from('<p id="mwAA">text</p>'), dataMw: Buffer.from('{"ids":{}}'), wikitext: Buffer.from("'''text'''") };

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
});
