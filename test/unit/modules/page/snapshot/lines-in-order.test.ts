import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { AHEAD, linesInOrder } from '../../../../../src/modules/page/snapshot/lines-in-order.js';

describe("a snapshot answer's lines", () => {
  it('are made a few ahead of the reader, in order, none held for a reader that stops', async () => {
    const made: number[] = [];
    const items = Array.from({ length: 500 }, (_, i) => i);
    const body = Readable.from(linesInOrder(items, async (i) => {
      made.push(i);
      // Uneven: later pages may be made first, the answer keeps the order.
      for (let t = 0; t < (i * 7) % 3; t++) await nextTurn();
      return i % 10 === 9 ? undefined : `{"page":${i},"text":"${'x'.repeat(100_000)}"}\n`;
    }), { objectMode: false, highWaterMark: 16 * 1024 });
    // Nothing read yet: the stream fills its small buffer and stops asking.
    for (let t = 0; t < 20; t++) await nextTurn();
    assert.ok(made.length <= 2 * AHEAD, `${made.length} made before anything was read`);
    const lines: string[] = [];
    let buffered = '';
    for await (const chunk of body) {
      buffered += chunk;
      const at = buffered.lastIndexOf('\n');
      if (at >= 0) {
        lines.push(...buffered.slice(0, at).split('\n'));
        buffered = buffered.slice(at + 1);
      }
      if (lines.length >= 40) break;
    }
    assert.deepEqual(lines.slice(0, 12).map((l) => JSON.parse(l).page), [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12], 'in order, pages without a line left out');
    await nextTurn();
    assert.ok(made.length < 40 + 2 * AHEAD + 10, `the reader stopped after 40 lines: ${made.length} made`);
  });

  it('end the answer with the error of a page that failed, the pages after it not waited for', async () => {
    const body = Readable.from(linesInOrder([0, 1, 2, 3, 4, 5, 6, 7], async (i) => {
      if (i === 2) throw new Error('storage went away');
      return `${i}\n`;
    }), { objectMode: false });
    let text = '';
    await assert.rejects(async () => {
      for await (const chunk of body) text += chunk;
    }, /storage went away/);
    assert.equal(text, '0\n1\n');
  });
});
