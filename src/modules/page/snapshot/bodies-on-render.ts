import type { Logger } from 'pino';
import type { RequestContext } from '../../../router/types.js';
import { BoundedMap } from '../../../util/bounded-map.js';
import type { LatestRenderStored } from '../read/renderer.js';
import { SnapshotBodies } from '../tables/snapshot-bodies.js';
import type { PageFactsStore } from '../read/facts-store.js';
import type { RevisionRow } from '../model/revision.js';
import { BODY_FORMAT, packPlainBody, type PlainBodyParts } from './record-format.js';
import { inThread, type RecordFormatter } from './record-formatter.js';

/**
 * A render's HTML and data-mw from this size on make their body on a worker thread: made here, a
 * long article's (800 KB of HTML) held the event loop, and every request the process was serving,
 * for 20 to 50 ms after each of its renders. Below it, a few milliseconds at most: a thread's
 * hand-off (the parts copied to it) and its start would cost more than they save.
 */
export const THREAD_BODY_BYTES = 128 * 1024;

/**
 * Snapshot bodies made when a page's latest render is stored, as Wikimedia Enterprise makes each
 * article's record when its change comes: a snapshot then copies every body from storage, where
 * making them (the 2.x HTML, the JSON escaping, the deflate: milliseconds of CPU a long page) bound
 * a store's first snapshot to a few hundred pages a second on two cores. Storing a render takes
 * about 2 ms more (the bench's corpus renders on average; the deflate on the thread pool), after
 * its readers were answered, and the body's compressed size in storage; only latest renders get
 * one (those the next snapshot writes).
 */
export class BodiesOnRender implements LatestRenderStored {
  private readonly tables = new BoundedMap<string, SnapshotBodies>(1024);

  /**
   * `enabled` false (`snapshot_bodies: snapshot`): bodies are left to snapshots; the table is still
   * made at start, for them and the HTTP snapshot. `thread`: where large bodies are made (the
   * page module's one worker thread; ended by `close`).
   */
  constructor(private readonly log: Logger, private readonly enabled = true, private readonly thread: RecordFormatter = inThread, private readonly facts?: PageFactsStore) {}

  private table(domain: string): SnapshotBodies {
    return this.tables.remember(domain, () => new SnapshotBodies(domain, BODY_FORMAT));
  }

  async create(ctx: RequestContext, domain: string): Promise<void> {
    await Promise.all([this.table(domain).create(ctx), this.facts?.create(ctx, domain)]);
  }

  /**
   * Makes and stores a render's body. A failure is logged, not thrown: the body is a copy a
   * snapshot makes again when it lacks it.
   */
  async made(ctx: RequestContext, domain: string, render: { title: string; rev: number; tid: string }, parts: PlainBodyParts, row?: RevisionRow): Promise<void> {
    // The page's facts with it, asked with other pages' in a batch that fills over seconds (see
    // PageFactsStore): not waited for, a failure only logged (the first record asks again). Asked
    // whether or not the body is made now: they are the wiki's word at this revision.
    if (row) void this.facts?.refresh(ctx, domain, row);
    if (!this.enabled) return;
    try {
      const large = parts.html.length + parts.dataMw.length >= THREAD_BODY_BYTES;
      const body = large ? await this.thread.packPlain(parts) : await packPlainBody(parts);
      await this.table(domain).put(ctx, render.title, render.rev, render.tid, body);
    } catch (err) {
      this.log.warn({ err, domain, title: render.title, rev: render.rev }, 'storing a render\'s snapshot body failed; a snapshot makes it');
    }
  }

  /** Ends the thread (bodies still being made are waited for first: see PageService.close), after the facts being asked. */
  async close(): Promise<void> {
    await this.facts?.flush();
    await this.thread.close();
  }
}
