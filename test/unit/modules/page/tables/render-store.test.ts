import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RequestContext, Request } from '../../../../../src/router/types.js';
import type { Render } from '../../../../../src/modules/page/model/render.js';
import { RenderStore, type RenderMemory } from '../../../../../src/modules/page/tables/render-store.js';

/** A render table of a few rows behind the internal request a TableClient makes; reads counted. */
function storedRenders(count: number) {
  const rows = Array.from({ length: count }, (_, i) => ({
    title: 'Page', rev: i + 1, tid: `0000000${i}-0000-1000-8000-000000000000`,
    html: Buffer.from(`<p>${i}</p>`), data_parsoid: Buffer.from('{}'), data_mw: Buffer.from('{}'), wikitext: Buffer.from(`${i}`),
    meta: { types: {}, digest: `d${i}` },
  }));
  const reads = { count: 0 };
  const ctx = {
    request: async (req: Request) => {
      reads.count++;
      const attributes = (req.body as { attributes: Record<string, unknown> }).attributes;
      return { status: 200, body: { items: rows.filter((r) => r.title === attributes.title && r.rev === attributes.rev && r.tid === attributes.tid) } };
    },
  } as unknown as RequestContext;
  return { rows, reads, ctx };
}

class MapMemory implements RenderMemory {
  readonly kept = new Map<string, Render>();
  render(domain: string, tid: string) {
    return this.kept.get(`${domain}/${tid}`);
  }
  rememberRender(domain: string, render: Render) {
    this.kept.set(`${domain}/${render.tid}`, render);
  }
}

describe('the render store', () => {
  it('keeps a render read from storage in memory once it is read again, not one read once', async () => {
    const { rows, reads, ctx } = storedRenders(3);
    const memory = new MapMemory();
    const store = new RenderStore(memory);
    const [once, twice] = [rows[0]!, rows[1]!];
    assert.equal((await store.byTid(ctx, 'd', 'Page', once.tid, once.rev))?.rev, once.rev);
    assert.equal(memory.kept.size, 0, 'read once: not kept');
    for (let i = 0; i < 2; i++) assert.equal((await store.byTid(ctx, 'd', 'Page', twice.tid, twice.rev))?.rev, twice.rev);
    assert.deepEqual([...memory.kept.keys()], [`d/${twice.tid}`], 'read twice: kept');
    const before = reads.count;
    assert.equal((await store.byTid(ctx, 'd', 'Page', twice.tid, twice.rev))?.rev, twice.rev);
    assert.equal(reads.count, before, 'then answered from memory');
  });

  it('keeps a render it stores at once', async () => {
    const { rows, ctx } = storedRenders(1);
    const memory = new MapMemory();
    const store = new RenderStore(memory);
    const row = rows[0]!;
    const render = { title: row.title, rev: row.rev, tid: row.tid, parts: { html: row.html, 'data-parsoid': row.data_parsoid, 'data-mw': row.data_mw, wikitext: row.wikitext }, types: {}, digest: 'd' } as unknown as Render;
    await store.save(ctx, 'd', render);
    assert.equal(memory.render('d', row.tid), render);
  });
});
