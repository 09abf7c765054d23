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
    meta: { types: { html: 'text/html', 'data-parsoid': i === 2 ? '' : 'application/json', 'data-mw': 'application/json', wikitext: 'text/plain' }, digest: `d${i}` },
  }));
  const reads = { count: 0, queries: [] as Record<string, unknown>[] };
  const ctx = {
    request: async (req: Request) => {
      reads.count++;
      const query = req.body as { attributes: Record<string, unknown>; proj?: string[] };
      reads.queries.push(query);
      const { attributes, proj } = query;
      const items = rows
        .filter((r) => r.title === attributes.title && (attributes.rev === undefined || r.rev === attributes.rev) && r.tid === attributes.tid)
        .map((r) => (proj ? Object.fromEntries(proj.map((c) => [c, r[c as keyof typeof r]])) : r));
      return { status: 200, body: { items } };
    },
  } as unknown as RequestContext;
  return { rows, reads, ctx };
}

class MapMemory implements RenderMemory {
  readonly kept = new Map<string, Render>();
  readonly uses: string[] = [];
  /** Whether the memory would take a render read from storage now (false: full of more used ones). */
  room = true;
  render(domain: string, tid: string) {
    return this.kept.get(`${domain}/${tid}`);
  }
  rememberRender(domain: string, render: Render) {
    this.kept.set(`${domain}/${render.tid}`, render);
  }
  noteRenderUse(domain: string, tid: string, hit: boolean) {
    this.uses.push(`${domain}/${tid}${hit ? ' hit' : ''}`);
  }
  wouldKeepRender() {
    return this.room;
  }
  offerRender(domain: string, render: Render) {
    if (this.room) this.rememberRender(domain, render);
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

  it('reads one property alone, with the render\'s head, and keeps the render whole when it keeps it', async () => {
    const { rows, reads, ctx } = storedRenders(2);
    const memory = new MapMemory();
    const store = new RenderStore(memory);
    const row = rows[1]!;
    const html = await store.part(ctx, 'd', 'Page', row.rev, row.tid, 'html');
    assert.deepEqual(html, { prop: 'html', render: { title: 'Page', rev: row.rev, tid: row.tid }, body: row.html, type: 'text/html', oneOff: true });
    assert.deepEqual(reads.queries.at(-1)!.proj, ['title', 'rev', 'tid', 'html', 'meta'], 'the HTML column alone, not the other three');
    assert.equal(memory.kept.size, 0, 'a property read alone is never kept: a render kept is every reader\'s');
    // Its second read is the one that keeps it: left to the whole render's read, which keeps it whole.
    assert.equal(await store.part(ctx, 'd', 'Page', row.rev, row.tid, 'html'), undefined);
    assert.equal((await store.byTid(ctx, 'd', 'Page', row.tid, row.rev))?.parts['data-parsoid'], row.data_parsoid);
    const kept = memory.render('d', row.tid)!;
    assert.deepEqual(kept.parts, { html: row.html, 'data-parsoid': row.data_parsoid, 'data-mw': row.data_mw, wikitext: row.wikitext });
    const before = reads.count;
    assert.equal((await store.part(ctx, 'd', 'Page', row.rev, row.tid, 'data-parsoid'))?.body, row.data_parsoid);
    assert.equal(reads.count, before, 'then every property is answered from memory');
  });

  it('reads one property alone again where the memory would not keep the render, and counts each use once', async () => {
    const { rows, reads, ctx } = storedRenders(2);
    const memory = new MapMemory();
    memory.room = false;
    const store = new RenderStore(memory);
    const row = rows[1]!;
    for (let i = 0; i < 3; i++) {
      assert.equal((await store.part(ctx, 'd', 'Page', row.rev, row.tid, 'html'))?.body, row.html);
      assert.deepEqual(reads.queries.at(-1)!.proj, ['title', 'rev', 'tid', 'html', 'meta'], `read ${i + 1}: the HTML column alone`);
    }
    assert.equal((await store.byTid(ctx, 'd', 'Page', row.tid, row.rev))?.rev, row.rev);
    assert.equal(memory.kept.size, 0, 'a whole render read is not kept either');
    assert.deepEqual(memory.uses, Array(4).fill(`d/${row.tid}`), 'four uses, none found in memory');
    // With room, the doorkeeper starts over (its sighting was spent): read once more alone, then
    // left to the whole render's read, which keeps it and counts the use once.
    memory.room = true;
    assert.equal((await store.part(ctx, 'd', 'Page', row.rev, row.tid, 'html'))?.body, row.html);
    assert.equal(await store.part(ctx, 'd', 'Page', row.rev, row.tid, 'html'), undefined);
    await store.byTid(ctx, 'd', 'Page', row.tid, row.rev);
    assert.equal(memory.kept.size, 1);
    assert.equal(memory.uses.length, 6);
    await store.part(ctx, 'd', 'Page', row.rev, row.tid, 'wikitext');
    assert.equal(memory.uses.at(-1), `d/${row.tid} hit`, 'then found in memory');
  });

  it('finds a property by the tid alone through its index, and answers one the wiki does not expose 404', async () => {
    const { rows, reads, ctx } = storedRenders(3);
    const store = new RenderStore(new MapMemory());
    const [found, unexposed] = [rows[1]!, rows[2]!];
    assert.equal((await store.part(ctx, 'd', 'Page', undefined, found.tid, 'wikitext'))?.render.rev, found.rev);
    assert.equal(reads.queries.at(-1)!.index, 'by_tid');
    await assert.rejects(store.part(ctx, 'd', 'Page', undefined, unexposed.tid, 'data-parsoid'), { status: 404, problemType: 'urn:problem:data-parsoid-unavailable' });
    assert.equal(await store.part(ctx, 'd', 'Page', undefined, '00000009-0000-1000-8000-000000000000', 'html'), undefined, 'none stored');
  });
});
