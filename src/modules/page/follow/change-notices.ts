import { timingSafeEqual } from 'node:crypto';
import PQueue from 'p-queue';
import type { Logger } from 'pino';
import { HttpError, badRequest, forbidden } from '../../../util/errors.js';
import type { Module, RequestContext, RouteRequest } from '../../../router/types.js';
import type { RecentChange } from '../../../upstream/action-api.js';
import type { PageService } from '../read/page-service.js';
import type { ChangeApplier } from './change-applier.js';

/** Events one notice may carry (the extension sends one; EventBus batches a few). */
const MAX_EVENTS = 500;
/** What every event names. */
const EVENT_FIELDS = ['page_change_kind', 'page'];
/** Pages refreshed at once for notices: a burst of edits queues rather than floods the wiki. */
const NOTICE_CONCURRENCY = 8;

/** The fields of MediaWiki's `page_change` event (EventBus's `mediawiki/page/change` schema) the service reads. */
interface PageChangeEvent {
  page_change_kind: string;
  dt?: string;
  page?: { page_title?: string; namespace_id?: number; page_id?: number };
  revision?: { rev_id?: number };
  prior_state?: { page?: { page_title?: string; namespace_id?: number } };
}

/** `page_change_kind` as the follower's recent change: every kind the schema has, and `protect` (the extension's). */
export function fromPageChange(event: PageChangeEvent): RecentChange {
  const title = event.page?.page_title;
  if (typeof title !== 'string' || !title) throw badRequest('A page_change event names its page (page.page_title).', 'invalid-notice');
  const ns = Number(event.page?.namespace_id ?? 0);
  const timestamp = typeof event.dt === 'string' && !Number.isNaN(Date.parse(event.dt)) ? event.dt : new Date().toISOString();
  const base = { ns, title, rcid: 0, timestamp, pageid: event.page?.page_id, revid: event.revision?.rev_id };
  const log = (logtype: string, logaction: string, logparams: Record<string, unknown> = {}): RecentChange => ({ ...base, type: 'log', logtype, logaction, logparams });
  switch (event.page_change_kind) {
    case 'create':
      return { ...base, type: 'new' };
    case 'edit':
      return { ...base, type: 'edit' };
    case 'delete':
      return log('delete', 'delete');
    case 'undelete':
      return log('delete', 'restore');
    case 'protect':
      return log('protect', 'protect');
    case 'visibility_change': {
      const rev = event.revision?.rev_id;
      if (!Number.isInteger(rev)) throw badRequest('A visibility_change event names its revision (revision.rev_id).', 'invalid-notice');
      return log('delete', 'revision', { ids: [rev] });
    }
    case 'move': {
      // The event is of the page where it is now; the old title is its prior state.
      const from = event.prior_state?.page?.page_title;
      if (typeof from !== 'string' || !from) throw badRequest('A move event names where the page was (prior_state.page.page_title).', 'invalid-notice');
      return { ...log('move', 'move', { target_title: title, target_ns: ns }), title: from, ns: Number(event.prior_state?.page?.namespace_id ?? ns) };
    }
    default:
      throw badRequest(`'${String(event.page_change_kind).slice(0, 50)}' is not a page_change_kind.`, 'invalid-notice');
  }
}

const sameSecret = (given: string, secret: string) => {
  const a = Buffer.from(given);
  const b = Buffer.from(secret);
  return a.length === b.length && timingSafeEqual(a, b);
};

/**
 * `POST /{domain}/v1/changes`: the wiki telling the service of a change as it happens (the
 * WikistoreNotify extension, or EventBus's `page_change` events), so the next read after the
 * wiki answered its editor sees the change. Applied as the follower applies the changes it
 * reads (the same plan, purges and renders). Answered once the pages touched are marked
 * unchecked (no request to the wiki: the next read asks it), or for a revision hidden once it is
 * re-checked; the refreshes and renders follow. A notice only makes the service ask the wiki again, so its
 * secret guards against being made to ask needlessly: it grants nothing else.
 */
export function changeNoticesModule(service: Pick<PageService, 'wiki'>, applierOf: (domain: string) => ChangeApplier, log: Logger): Module {
  const queue = new PQueue({ concurrency: NOTICE_CONCURRENCY });

  function authenticate(req: RouteRequest, ctx: RequestContext): void {
    if (ctx.admin) return;
    const secret = service.wiki(req.domain).noticeSecret;
    if (!secret) throw forbidden(`Notices of changes are not taken for ${req.domain}: set wikis.${req.domain}.notice_secret.`, 'notices-off');
    // A header from the extension; the query for EventBus, which sends no headers of its own.
    const bearer = /^\s*bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
    const given = bearer ?? req.query.get('secret') ?? '';
    if (!sameSecret(given, secret)) throw forbidden('The notice does not carry the wiki\'s notice secret.', 'bad-notice-secret');
  }

  return {
    name: 'page-change-notices',
    api: 'v1',
    routes: [{
      method: 'POST',
      path: '/changes',
      body: 'json',
      spec: {
        summary: "The wiki's notice of its changes (MediaWiki page_change events): applied before the answer",
        tags: ['changes'],
        parameters: [{ name: 'secret', in: 'query', schema: { type: 'string' }, description: 'The notice secret, for senders that set no Authorization header (EventBus)' }],
        // One event, or several (as EventBus posts them).
        requestBody: { content: { 'application/json': { schema: { type: ['object', 'array'], required: EVENT_FIELDS, items: { type: 'object', required: EVENT_FIELDS }, maxItems: MAX_EVENTS } } } },
      },
      async handler(req, ctx) {
        authenticate(req, ctx);
        const events = (Array.isArray(req.body) ? req.body : [req.body]) as PageChangeEvent[];
        if (events.length > MAX_EVENTS) throw new HttpError(413, 'too-many-notices', `At most ${MAX_EVENTS} events a notice.`);
        for (const e of events) if (!e || typeof e !== 'object' || Array.isArray(e)) throw badRequest('Each event is a JSON object.', 'invalid-notice');
        const changes = events.map(fromPageChange);
        const applier = applierOf(req.domain);
        // The pages are marked unchecked at once: the next read asks the wiki. Asking the wiki now
        // would wait for a worker of the wiki while its editors' requests hold them all.
        const named = await applier.markNoticed(ctx, changes);
        const applying = await applier.apply(ctx, changes, (_kind, work, priority) => queue.add(work, { priority }).then(() => undefined), { linksFirst: false });
        applying.rest.catch((err) => log.warn({ err, domain: req.domain }, 'applying a notice failed; the next read or the follower catches up'));
        if (named) applying.stored.catch(() => undefined);
        else await applying.stored;
        return { status: 200, headers: { 'cache-control': 'no-store' }, body: { applied: changes.length } };
      },
    }],
  };
}
