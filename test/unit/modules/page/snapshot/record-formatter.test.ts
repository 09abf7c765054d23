import assert from 'node:assert/strict';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, it } from 'node:test';
import { formatRecord, packPlainBody, recordHead, type RecordInput } from '../../../../../src/modules/page/snapshot/record-format.js';
import { inThread } from '../../../../../src/modules/page/snapshot/record-formatter.js';
import { workerFormatter } from '../../../../../src/modules/page/thread/page-thread.js';

const gz = (text: string) => gzipSync(text);

function input(n: number): RecordInput {
  return {
    row: { title: `Page_${n}`, rev: 100 + n, tid: '00000000-0000-1000-8000-000000000000', page_id: n, timestamp: '2026-01-01T00:00:00Z', comment: `edit ${n}`, user_id: 7, user_text: 'Editor', size: 12 } as RecordInput['row'],
    text: `Page ${n}`,
    ns: 0,
    facts: { id: 'testwiki', server: 'https://wiki.example', articlePath: '/wiki/$1', language: 'en', license: { name: 'CC BY-SA 4.0', url: 'https://creativecommons.org/licenses/by-sa/4.0/' } },
    eventTime: '2026-02-01T00:00:00.000Z',
    // A slice of a larger buffer, as rows read from storage can be.
    html: gz(`<html><head></head><body><p id="mwAA">page ${n} "quoted" \u00e9</p></body></html>`).subarray(0),
    dataMw: gz(JSON.stringify({ ids: { mwAA: { parts: [`template ${n}`] } } })),
    wikitext: gz(`'''page ${n}'''`),
  };
}

describe('snapshot records', () => {
  it('are one JSON line with the 2.x HTML (data-mw inline) and the wikitext', async () => {
    const line = await inThread.format(input(1));
    assert.ok(line.endsWith('\n') && !line.slice(0, -1).includes('\n'));
    const record = JSON.parse(line);
    assert.equal(record.name, 'Page 1');
    assert.equal(record.url, 'https://wiki.example/wiki/Page_1');
    assert.match(record.article_body.html, /<p id="mwAA" data-mw='\{"parts":\["template 1"\]\}'>page 1 "quoted" \u00e9<\/p>/);
    assert.equal(record.article_body.wikitext, "'''page 1'''");
  });

  it('made on worker threads are the bytes made in the calling thread, in the order asked', async () => {
    const workers = workerFormatter(2);
    try {
      const inputs = Array.from({ length: 20 }, (_, n) => input(n));
      const lines = await Promise.all(inputs.map((i) => workers.format(i)));
      assert.deepEqual(lines, inputs.map(formatRecord));
    } finally {
      await workers.close();
    }
  });

  it('fail with the reason when a part is not what it should be, and the pool goes on', async () => {
    const workers = workerFormatter(1);
    try {
      await assert.rejects(workers.format({ ...input(1), dataMw: gz('not json') }), /JSON/);
      assert.equal(JSON.parse(await workers.format(input(2))).name, 'Page 2');
    } finally {
      await workers.close();
    }
  });
});

describe('snapshot bodies', () => {
  it('after their record\'s head, each a gzip member, inflate to the line a record is, its body the last field', async () => {
    for (const n of [1, 2]) {
      const body = await inThread.pack(input(n));
      const head = recordHead(input(n), body.wikitextBytes, body.render);
      const line = gunzipSync(Buffer.concat([gzipSync(head), body.gz])).toString('utf8');
      assert.equal(line, formatRecord(input(n)));
      assert.equal(Buffer.byteLength(head) + body.bytes, Buffer.byteLength(line));
      assert.equal(Object.keys(JSON.parse(line)).at(-1), 'article_body');
      // What the render gives its record is made with its body.
      assert.equal(JSON.parse(line).abstract, `page ${n} "quoted" \u00e9`);
      assert.equal(JSON.parse(line).version.number_of_characters, `'''page ${n}'''`.length);
    }
  });

  it('give the revision\'s size from the wikitext where the revision row has none', async () => {
    const unsized: RecordInput = { ...input(3), row: { ...input(3).row, size: null } };
    const body = await inThread.pack(unsized);
    assert.equal(body.wikitextBytes, Buffer.byteLength("'''page 3'''"));
    assert.equal(JSON.parse(formatRecord(unsized)).version.size.value, body.wikitextBytes);
  });

  it('made on worker threads are the bytes made in the calling thread', async () => {
    const workers = workerFormatter(2);
    try {
      const inputs = Array.from({ length: 10 }, (_, n) => input(n));
      const packed = await Promise.all(inputs.map((i) => workers.pack(i)));
      const here = await Promise.all(inputs.map((i) => inThread.pack(i)));
      assert.deepEqual(packed.map((p) => Buffer.from(p.gz)), here.map((p) => Buffer.from(p.gz)));
      assert.deepEqual(packed.map((p) => [p.bytes, p.wikitextBytes]), here.map((p) => [p.bytes, p.wikitextBytes]));
    } finally {
      await workers.close();
    }
  });

  it('made from a render\'s parts as they came (as it is stored) are the bytes a snapshot makes of them stored', async () => {
    // A long page too: deflate's blocks and window come into play past 64 KB.
    const long = { ...input(4), html: gz(`<html><body>${Array.from({ length: 3000 }, (_, i) => `<p id="mw${i}">line ${i} \u00e9 "q"</p>`).join('')}</body></html>`) };
    for (const parts of [input(1), long]) {
      const plain = await packPlainBody({ html: gunzipSync(parts.html), dataMw: gunzipSync(parts.dataMw), wikitext: gunzipSync(parts.wikitext) });
      const stored = await inThread.pack(parts);
      assert.deepEqual(Buffer.from(plain.gz), Buffer.from(stored.gz));
      assert.deepEqual([plain.bytes, plain.wikitextBytes], [stored.bytes, stored.wikitextBytes]);
    }
  });
});
