import { HttpError } from '../../../util/errors.js';
import { withBody } from '../../../router/typed-body.js';
import type { Module } from '../../../router/types.js';
import type { PageService } from '../read/page-service.js';
import type { SaveLocks } from '../tables/save-locks.js';
import { latestPurge } from '../model/purge-urls.js';
import { SAVE_STEPS } from './save-steps.js';
import { recordSaveBody, saveRecordSpecs } from './write-spec.js';

/** Attempts at moving the latest revision forward before giving up (each loses only to another writer). */
const CAS_ATTEMPTS = 5;

/**
 * The steps of a save's transaction, each a route of its own: `/{domain}/sys/page_saves/...` (the
 * revision recorded, the lock released), `/sys/page_renders/...` (its render stored) and
 * `/sys/page_purges/...` (the caches told).
 * Each is idempotent, as a transaction's steps must be: a process that finishes another's
 * transaction after a crash runs them again.
 */
export function saveRecordsModule(service: Pick<PageService, 'purger' | 'renderer' | 'revisions'>, locks: (domain: string) => SaveLocks): Module {
  return {
    name: 'page_save_steps',
    api: 'sys',
    tables: ['page_save_locks'],
    setupWiki: (ctx, domain) => locks(domain).create(ctx),
    routes: [
      {
        ...SAVE_STEPS.record,
        body: 'json',
        spec: saveRecordSpecs.recordSave,
        handler: withBody(recordSaveBody, async (req, ctx) => {
          // The saved revision becomes the page's latest, over the latest revision stored (a
          // conditional write); a later revision already stored stays the latest.
          const revs = service.revisions.table(req.domain);
          const title = req.params.title!;
          const rev = Number(req.params.rev);
          const { from, row } = req.body;
          let expected = from;
          for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
            if (await revs.recordSaved(ctx, title, expected, { ...row, rev })) return { status: 201, body: { title, rev, latest: rev } };
            const current = await revs.storedLatest(ctx, title);
            if (current !== null && current >= rev) {
              if (!(await revs.get(ctx, title, rev))) await revs.saveRow(ctx, title, { ...row, rev });
              return { status: 200, body: { title, rev, latest: current } };
            }
            expected = current;
          }
          throw new HttpError(409, 'latest-revision-contended', `The latest revision of ${title} kept changing.`);
        }),
      },
      {
        ...SAVE_STEPS.release,
        spec: saveRecordSpecs.releaseLock,
        handler: async (req, ctx) => {
          await locks(req.domain).release(ctx, req.params.title!, req.params.lock!.toLowerCase());
          return { status: 204 };
        },
      },
      {
        ...SAVE_STEPS.purge,
        spec: saveRecordSpecs.purge,
        handler: async (req) => {
          // A failure is a 503: the transaction is left for the sweep, which purges again later.
          await service.purger.purgeAll(latestPurge(req.domain, req.params.title!));
          return { status: 204 };
        },
      },
      {
        ...SAVE_STEPS.render,
        spec: saveRecordSpecs.storeRender,
        handler: async (req, ctx) => {
          const rev = Number(req.params.rev);
          const render = await service.renderer.finishSaved(ctx, req.domain, req.params.title!, rev);
          return { status: 200, headers: { etag: `"${rev}/${render.tid}"` }, body: { title: render.title, rev, tid: render.tid } };
        },
      },
    ],
  };
}
