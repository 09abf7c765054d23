import { HttpError, badRequest } from '../../../util/errors.js';
import { pagingFrom } from '../../../router/paging.js';
import { withBody } from '../../../router/typed-body.js';
import type { Handler, Module, RequestContext, Response, Reuse, Route, RouteRequest } from '../../../router/types.js';
import { isTid } from '../../../util/tid.js';
import { parseDataMw } from '../edit/save-routes.js';
import { HTML_2_TYPE, negotiateHtml } from '../model/html-versions.js';
import type { NormalizeTitle } from '../model/title-url.js';
import type { BranchHead, BranchVersion } from '../tables/page-branches.js';
import type { ListedBranch } from '../tables/branch-lists.js';
import type { BranchCallers, Caller } from './branch-callers.js';
import { BranchElsewhere, branchPath, type BranchInput, type Branches } from './branches.js';
import type { VersionBodies } from './version-bodies.js';
import { actionBody, branchBody, branchSpecs, shareBody } from './branch-spec.js';

/** A branch is one person's work (or its sharers'): never kept by a shared cache. */
const PRIVATE = { 'cache-control': 'private, no-cache', vary: 'Cookie, Authorization' };
const etag = (tid: string) => `"${tid}"`;

/** The version If-Match names: `"{tid}"`; anything else is a 400 (absent: 428 where it is required). */
function versionOf(req: RouteRequest, required: boolean): string | undefined {
  const value = req.headers['if-match'];
  if (value === undefined) {
    if (required) throw new HttpError(428, 'precondition-required', 'Name the version you edited with If-Match: "{tid}" (the ETag you read).');
    return undefined;
  }
  const tid = /^"([^"]+)"$/.exec(value.trim())?.[1];
  if (!tid || !isTid(tid)) throw badRequest('If-Match must be the ETag of a branch version: "{tid}".', 'invalid-if-match');
  return tid.toLowerCase();
}

function inputOf(body: { wikitext?: string; html?: string; 'data-mw'?: unknown; tid?: string; base_revid?: number; comment?: string }): BranchInput {
  return { wikitext: body.wikitext, html: body.html, tid: body.tid?.toLowerCase(), dataMw: parseDataMw(body['data-mw']), baseRevid: body.base_revid, comment: body.comment };
}

export interface BranchRouteParts {
  branches: Branches;
  callers: BranchCallers;
  normalize: NormalizeTitle;
  bodies: VersionBodies;
}

/** `/{domain}/v1/page/{title}/branches/...` and `/{domain}/v1/branches/`: drafts of pages. */
export function branchRoutes({ branches, callers, normalize, bodies }: BranchRouteParts): Route[] {
  const metadata = (head: BranchHead, caller: Caller, status = 200, extra: Record<string, unknown> = {}): Response => {
    return {
      status,
      headers: { ...PRIVATE, etag: etag(head.latest_tid) },
      body: {
        branch: head.branch, page: head.page, owner: head.owner, state: head.state, base_revid: head.base_revid, latest_tid: head.latest_tid,
        created: head.created, updated: head.updated, expires: new Date(branches.expiresAt(head.updated)).toISOString(), merged_rev: head.merged_rev,
        // Whom it is shared with is the owner's business.
        ...(head.owner !== null && head.owner === caller.user ? { shares: head.shares } : {}),
        ...extra,
      },
    };
  };

  /**
   * A handler of one branch: the caller identified, the branch found and checked (404 if it is not
   * theirs to see); a branch whose page moved answers a redirect to its new URL.
   */
  const ofBranch = (
    need: 'read' | 'write',
    handle: (req: RouteRequest, ctx: RequestContext, head: BranchHead, caller: Caller, latest?: { version: BranchVersion; reuse?: Reuse }) => Promise<Response>,
    { bodyToken = false, withLatest = false, recentOk = false }: { bodyToken?: boolean; withLatest?: boolean; recentOk?: boolean } = {},
  ): Handler =>
    async (req, ctx) => {
      const title = await normalize(req);
      const caller = need === 'read' ? await callers.reader(req, ctx) : await callers.writer(req, ctx, bodyToken ? (req.body as { csrf_token?: unknown } | undefined)?.csrf_token : undefined);
      const id = req.params.branch!.toLowerCase();
      try {
        if (withLatest) {
          const { head, latest, validity } = await branches.getWithLatest(ctx, req.domain, title, id, caller);
          // Sent again to the same caller while nothing was written and who they are is known.
          const reuse = validity && { until: Math.min(validity.until, caller.knownUntil), valid: validity.valid, perCaller: true };
          return await handle(req, ctx, head, caller, { version: latest, reuse });
        }
        return await handle(req, ctx, await branches.get(ctx, req.domain, title, id, caller, need, { recentOk }), caller);
      } catch (e) {
        if (!(e instanceof BranchElsewhere)) throw e;
        // What follows the branch in `/{domain}/v1/page/{title}/branches/{branch}/...`, found by
        // position: the title may hold the branch's name.
        const after = req.path.split('/').slice(7);
        const rest = after.length > 0 ? `/${after.join('/')}` : '';
        const query = req.query.size ? `?${req.query}` : '';
        // A GET may follow a 301; a change keeps its method and body only through a 308.
        const status = req.method === 'GET' || req.method === 'HEAD' ? 301 : 308;
        return { status, headers: { ...PRIVATE, location: `/${req.domain}/v1${branchPath(e.title, id)}${rest}${query}` } };
      }
    };

  const listed = (items: ListedBranch[]) => items.map((b) => ({ ...b, expires: new Date(branches.expiresAt(b.updated)).toISOString() }));

  const content = async (req: RouteRequest, ctx: RequestContext, head: BranchHead, version: BranchVersion, byTid: boolean, reuse?: Reuse): Promise<Response> => {
    const headers = { ...PRIVATE, etag: etag(version.tid), 'content-encoding': 'gzip', ...(byTid ? { 'cache-control': 'private, max-age=86400, immutable' } : {}) };
    const key = `${req.domain}\u0000${head.branch}\u0000${version.tid}`;
    if (req.params.format === 'wikitext') {
      return { status: 200, headers: { ...headers, 'content-type': 'text/plain; charset=utf-8' }, body: await bodies.gzipped(`${key}\u0000wikitext`, () => version.wikitext ?? ''), reuse };
    }
    // As it was made, unless a 2.x client asks for data-mw inline.
    const want = req.query.get('data-mw') === 'inline' ? '2' : negotiateHtml(req.headers.accept, '999');
    let type = '';
    const body = await bodies.gzipped(`${key}\u0000html\u0000${want}`, async () => {
      const made = await branches.html(ctx, req.domain, head, version, want);
      type = made.type;
      return made.html;
    });
    // Kept bodies keep their type too: the version's own, or 2.x where it was made so.
    if (!type) type = version.html_type ?? (version.html === null || (want === '2' && (version.data_mw as { ids?: unknown } | null)?.ids) ? HTML_2_TYPE : 'text/html; charset=utf-8');
    return { status: 200, headers: { ...headers, 'content-type': type, vary: `${PRIVATE.vary}, Accept` }, body, reuse };
  };

  return [
    {
      method: 'POST',
      path: '/page/{title}/branches/',
      body: 'form',
      spec: branchSpecs.create,
      handler: withBody(branchBody, async (req, ctx) => {
        const title = await normalize(req);
        const caller = await callers.writer(req, ctx, req.body.csrf_token);
        const { head, version, others } = await branches.create(ctx, req.domain, title, inputOf(req.body), caller);
        return {
          status: 201,
          headers: { ...PRIVATE, etag: etag(version.tid), location: `/${req.domain}/v1${branchPath(title, head.branch)}` },
          body: { branch: head.branch, tid: version.tid, base_revid: version.base_revid, others: listed(others) },
        };
      }),
    },
    {
      method: 'GET',
      path: '/page/{title}/branches/',
      spec: branchSpecs.list,
      handler: async (req, ctx) => {
        const title = await normalize(req);
        const caller = await callers.reader(req, ctx);
        return { status: 200, headers: PRIVATE, body: { items: listed(await branches.visibleOfPage(ctx, req.domain, title, caller)) } };
      },
    },
    {
      method: 'GET',
      path: '/branches/',
      spec: branchSpecs.mine,
      handler: async (req, ctx) => {
        const caller = await callers.reader(req, ctx);
        if (caller.user === null) throw new HttpError(401, 'not-logged-in', 'Log in to the wiki to list your branches; anonymous branches are reached by their id.');
        const { own, shared } = await branches.ofUser(ctx, req.domain, caller.user);
        const week = Date.now() + 7 * 86_400_000;
        const keep = (b: ListedBranch) => req.query.get('expiring') !== 'week' || (b.state === 'open' && branches.expiresAt(b.updated) <= week);
        return { status: 200, headers: PRIVATE, body: { items: listed(own.filter(keep)), shared: listed(shared.filter(keep)) } };
      },
    },
    {
      method: 'GET',
      path: '/page/{title}/branches/{branch}',
      spec: branchSpecs.get,
      handler: ofBranch('read', async (_req, _ctx, head, caller) => metadata(head, caller)),
    },
    {
      method: 'PUT',
      path: '/page/{title}/branches/{branch}',
      body: 'form',
      spec: branchSpecs.update,
      handler: withBody(branchBody, ofBranch('write', async (req, ctx, head, caller) => {
        const over = versionOf(req, true)!;
        const { head: next } = await branches.update(ctx, req.domain, head, over, inputOf(req.body as Parameters<typeof inputOf>[0]), caller);
        return metadata(next, caller);
      }, { bodyToken: true, recentOk: true })),
    },
    {
      method: 'DELETE',
      path: '/page/{title}/branches/{branch}',
      spec: branchSpecs.abandon,
      handler: ofBranch('write', async (req, ctx, head, caller) => metadata(await branches.abandon(ctx, req.domain, head), caller)),
    },
    {
      method: 'GET',
      path: '/page/{title}/branches/{branch}/history',
      spec: branchSpecs.history,
      handler: ofBranch('read', async (req, ctx, head) => {
        const { limit, next } = pagingFrom(req);
        const page = await branches.history(ctx, req.domain, head, limit ?? 20, next);
        // The content itself is read by tid; the history lists who changed what, when.
        const items = page.items.map((v) => ({ tid: v.tid, base_revid: v.base_revid, author: v.author, comment: v.comment, format: v.html !== null && v.base_tid !== null ? 'html' : 'wikitext' }));
        return { status: 200, headers: PRIVATE, body: { items, ...(page.next ? { next: page.next } : {}) } };
      }),
    },
    {
      method: 'GET',
      path: '/page/{title}/branches/{branch}/{format}',
      spec: branchSpecs.content,
      handler: ofBranch('read', async (req, ctx, head, _caller, latest) => content(req, ctx, head, latest!.version, false, latest!.reuse), { withLatest: true }),
    },
    {
      method: 'GET',
      path: '/page/{title}/branches/{branch}/{format}/{tid}',
      spec: branchSpecs.versionContent,
      handler: ofBranch('read', async (req, ctx, head) => content(req, ctx, head, await branches.version(ctx, req.domain, head, req.params.tid!.toLowerCase()), true)),
    },
    {
      method: 'POST',
      path: '/page/{title}/branches/{branch}/promote',
      body: 'optional-json',
      spec: branchSpecs.promote,
      handler: withBody(actionBody, ofBranch('write', async (req, ctx, head, caller) => {
        const comment = (req.body as { comment?: string } | undefined)?.comment;
        const result = await branches.promote(ctx, req.domain, head, caller, comment, versionOf(req, false));
        const body = { title: result.title, rev: result.rev, tid: result.tid, branch: result.branch, ...(result.status === 200 ? { nochange: true } : {}) };
        return { status: result.status, headers: { 'cache-control': 'no-store' }, body };
      }, { bodyToken: true })),
    },
    {
      method: 'POST',
      path: '/page/{title}/branches/{branch}/rebase',
      body: 'optional-json',
      spec: branchSpecs.rebase,
      handler: withBody(actionBody, ofBranch('write', async (req, ctx, head, caller) => {
        const { head: next, unchanged } = await branches.rebase(ctx, req.domain, head, caller, versionOf(req, false));
        return metadata(next, caller, 200, { unchanged });
      }, { bodyToken: true })),
    },
    {
      method: 'PUT',
      path: '/page/{title}/branches/{branch}/shares/{user}',
      body: 'form',
      spec: branchSpecs.share,
      handler: withBody(shareBody, ofBranch('write', async (req, ctx, head, caller) => {
        const user = await callers.userName(req.domain, req.params.user!);
        const access = (req.body as { access: 'read' | 'write' }).access;
        return metadata(await branches.share(ctx, req.domain, head, caller, user, access), caller);
      }, { bodyToken: true })),
    },
    {
      method: 'DELETE',
      path: '/page/{title}/branches/{branch}/shares/{user}',
      spec: branchSpecs.unshare,
      handler: ofBranch('write', async (req, ctx, head, caller) => {
        const user = await callers.userName(req.domain, req.params.user!);
        return metadata(await branches.share(ctx, req.domain, head, caller, user, null), caller);
      }),
    },
  ];
}

/** `/{domain}/v1/page/{title}/branch/...`: drafts of pages (their tables are `page_branches`'s, branch-records.ts). */
export function branchRoutesModule(parts: BranchRouteParts): Module {
  return { name: 'page-drafts', api: 'v1', routes: branchRoutes(parts) };
}
