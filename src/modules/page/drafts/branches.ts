import type { Logger } from 'pino';
import { HttpError, badRequest } from '../../../util/errors.js';
import type { RequestContext } from '../../../router/types.js';
import type { AnswerValidity } from '../../../storage/answer-validity.js';
import { compareTids, tidAfter, tidTime, unguessableTid } from '../../../util/tid.js';
import { BoundedMap } from '../../../util/bounded-map.js';
import type { PageSaver, SaveResult } from '../edit/page-saver.js';
import { step } from '../edit/save-steps.js';
import { BRANCH_MERGED_STEP } from './branch-spec.js';
import type { PageService } from '../read/page-service.js';
import { HTML_2_TYPE, toHtml2, type HtmlVersion } from '../model/html-versions.js';
import { titleSegment } from '../model/title-url.js';
import { RevisionMoved } from '../model/page-moves.js';
import { BranchExpiry, dayOf } from '../tables/branch-expiry.js';
import { BranchLists, listsOf, type ListedBranch } from '../tables/branch-lists.js';
import { BranchTable, type Access, type BranchHead, type BranchVersion, type VersionContent } from '../tables/page-branches.js';
import type { Caller } from './branch-callers.js';
import { CurrentMerges, type MergeSources } from './current-merges.js';

/** What a client sends to make a version: wikitext, or edited HTML (with the render it was edited from). */
export interface BranchInput {
  wikitext?: string;
  html?: string;
  /** The stored render the HTML was edited from. */
  tid?: string;
  dataMw?: Record<string, unknown>;
  baseRevid?: number;
  comment?: string;
}

/** The branch lives under another title now (the page moved): its URLs there answer. */
export class BranchElsewhere extends Error {
  constructor(readonly title: string) {
    super(`The branch belongs to ${title}.`);
  }
}

/** The branch's own URL path under `/{domain}/v1`. */
export const branchPath = (title: string, branch: string) => `/page/${titleSegment(title)}/branches/${branch}`;

const notFound = (branch: string) => new HttpError(404, 'branch-not-found', `There is no branch ${branch} of this page you may see.`);
const notOpen = (head: BranchHead) => new HttpError(409, 'branch-not-open', `Branch ${head.branch} is ${head.state}: it takes no more changes.`, { extensions: { state: head.state } });

/**
 * Drafts of pages (docs/architecture.md, "Drafts and branches"): versions kept per branch with
 * CAS on the branch's latest version, visible to their owner and whom they share them with,
 * promoted to the wiki through the save path (three-way merged with what the page became
 * meanwhile), moved with their page, and expired when left alone for the TTL.
 */
export class Branches {
  private readonly tables = new BoundedMap<string, { branches: BranchTable; lists: BranchLists; expiry: BranchExpiry }>(1000);

  private readonly merges: CurrentMerges;

  constructor(
    private readonly service: MergeSources & Pick<PageService, 'wiki'>,
    private readonly saver: PageSaver,
    private readonly ttlSeconds: number,
    private readonly log: Logger,
  ) {
    this.merges = new CurrentMerges(service);
  }

  /** The domain's branch tables. */
  tablesOf(domain: string) {
    return this.tables.remember(domain, () => ({
      branches: new BranchTable(domain, this.ttlSeconds),
      lists: new BranchLists(domain, this.ttlSeconds),
      expiry: new BranchExpiry(domain),
    }));
  }

  async createTables(ctx: RequestContext, domain: string): Promise<void> {
    const t = this.tablesOf(domain);
    await Promise.all([t.branches.create(ctx), t.lists.create(ctx), t.expiry.create(ctx)]);
  }

  /** When a branch updated at `updated` expires. */
  expiresAt(updated: string): number {
    return Date.parse(updated) + this.ttlSeconds * 1000;
  }

  /** May `caller` read (or write) the branch? An anonymous branch is anyone's who has its id. */
  private access(head: BranchHead, caller: Caller): Access | undefined {
    if (head.owner === null || head.owner === caller.user) return 'write';
    return caller.user === null ? undefined : head.shares[caller.user];
  }

  /**
   * The branch as `caller` may see it under `title`: 404 if it does not exist or is not theirs to
   * see, 403 for a change asked by someone it is shared with to read only.
   */
  async get(ctx: RequestContext, domain: string, title: string, branch: string, caller: Caller, need: Access, { recentOk = false } = {}): Promise<BranchHead> {
    // A new version may start from what this process wrote or read a moment ago (`recentOk`): its
    // own condition (the version it is written over, the branch open) is checked by the write.
    const head = (recentOk ? this.recent(domain, branch) : undefined) ?? (await this.tablesOf(domain).branches.head(ctx, branch));
    this.check(head, title, caller, need, branch);
    this.remember(domain, head!);
    return head!;
  }

  /**
   * A branch with its latest version, in one read (what reads of its content need), and how long
   * what was read holds where the engine knows (storage/answer-validity.ts).
   */
  async getWithLatest(ctx: RequestContext, domain: string, title: string, branch: string, caller: Caller): Promise<{ head: BranchHead; latest: BranchVersion; validity?: AnswerValidity }> {
    const found = await this.tablesOf(domain).branches.headWithLatest(ctx, branch);
    this.check(found?.head, title, caller, 'read', branch);
    this.remember(domain, found!.head);
    return found!;
  }

  private check(head: BranchHead | undefined, title: string, caller: Caller, need: Access, branch: string): void {
    const access = head && this.access(head, caller);
    if (!head || !access) throw notFound(branch);
    if (head.page !== title) throw new BranchElsewhere(head.page);
    if (need === 'write' && access !== 'write') throw new HttpError(403, 'branch-read-only', `Branch ${branch} is shared with you to read, not to change.`);
  }

  /** Heads read or written here lately, for changes (a second at most: shares revoked elsewhere apply within it). */
  private readonly heads = new BoundedMap<string, { head: BranchHead; at: number }>(10_000);

  private remember(domain: string, head: BranchHead): void {
    this.heads.set(`${domain}\u0000${head.branch}`, { head, at: Date.now() });
  }

  private recent(domain: string, branch: string): BranchHead | undefined {
    const hit = this.heads.get(`${domain}\u0000${branch}`);
    return hit && Date.now() - hit.at < RECENT_MS ? hit.head : undefined;
  }

  /** The head as storage has it now (a remembered one was older than the version a change names). */
  private async freshHead(ctx: RequestContext, domain: string, branch: string): Promise<BranchHead | undefined> {
    const head = await this.tablesOf(domain).branches.head(ctx, branch);
    if (head) this.remember(domain, head);
    return head;
  }

  /** The version content a client's input makes: wikitext as given, HTML kept and turned into wikitext too. */
  private async contentOf(ctx: RequestContext, domain: string, title: string, input: BranchInput, caller: Caller, baseRevid: number | null): Promise<VersionContent> {
    if ((input.wikitext === undefined) === (input.html === undefined)) throw badRequest('Give either wikitext or html.', 'invalid-branch');
    if (input.tid !== undefined && input.html === undefined) throw badRequest('tid names the render HTML was edited from; it goes with html.', 'invalid-branch');
    const common = { base_revid: baseRevid, author: caller.user, comment: input.comment ?? null };
    if (input.wikitext !== undefined) {
      await this.withinArticleSize(domain, input.wikitext);
      return { ...common, base_tid: null, wikitext: input.wikitext, html: null, html_type: null, data_mw: null };
    }
    const wikitext = await this.saver.htmlAsWikitext(ctx, domain, { title, html: input.html, tid: input.tid, dataMw: input.dataMw, baseRevid: baseRevid ?? undefined });
    await this.withinArticleSize(domain, wikitext);
    return { ...common, base_tid: input.tid ?? null, wikitext, html: input.html!, html_type: null, data_mw: input.dataMw ?? null };
  }

  /**
   * A version's wikitext no larger than the wiki takes a page (`$wgMaxArticleSize`, its site
   * info's `maxarticlesize` in bytes): a larger one could never be promoted, and a branch is
   * stored for weeks. Refused as the wiki refuses such an edit (`contenttoobig`), with a 413.
   */
  private async withinArticleSize(domain: string, wikitext: string): Promise<void> {
    const max = Number((await this.service.wiki(domain).siteInfo()).general.maxarticlesize);
    if (!(max > 0) || Buffer.byteLength(wikitext, 'utf8') <= max) return;
    throw new HttpError(413, 'content-too-big', `The content you supplied exceeds the article size limit of ${Math.floor(max / 1024)} kibibytes.`, { extensions: { wiki_code: 'contenttoobig' } });
  }

  /** Starts a branch of `title` from `baseRevid` (default: the latest revision). */
  async create(ctx: RequestContext, domain: string, title: string, input: BranchInput, caller: Caller): Promise<{ head: BranchHead; version: BranchVersion; others: ListedBranch[] }> {
    let baseRevid = input.baseRevid ?? null;
    if (baseRevid === null) baseRevid = await this.merges.currentRevid(ctx, domain, title, false);
    else {
      const row = await this.service.revisions.revision(ctx, domain, title, baseRevid, false).catch((e: unknown) => {
        if (e instanceof RevisionMoved) throw badRequest(`Revision ${baseRevid} belongs to ${e.title}, not to ${title}.`, 'base-of-another-page');
        throw e;
      });
      if (row.title !== title) throw badRequest(`Revision ${baseRevid} belongs to ${row.title}, not to ${title}.`, 'base-of-another-page');
    }
    const content = await this.contentOf(ctx, domain, title, input, caller, baseRevid);
    // Its id is all that reaches an anonymous branch.
    const branch = unguessableTid();
    const tid = branch;
    const now = new Date(tidTime(tid)).toISOString();
    const t = this.tablesOf(domain);
    const head = { branch, page: title, owner: caller.user, created: now, updated: now, shares: {} };
    const full: BranchHead = { ...head, state: 'open', latest_tid: tid, merged_rev: null, merged_tid: null, base_revid: baseRevid };
    // The expiry pointer first: a process dying before the branch is written leaves a pointer the
    // sweep drops, never a branch no sweep finds (its lists are written after it, and named here).
    await t.expiry.record(ctx, branch, this.expiresAt(now), listsOf(full));
    await t.branches.start(ctx, head, tid, content);
    await t.lists.record(ctx, full);
    const others = (await this.visibleOfPage(ctx, domain, title, caller)).filter((b) => b.branch !== branch);
    return { head: full, version: { tid, ...content }, others };
  }

  /**
   * The page's open branches `caller` may see: their own, and those shared with them. Read from
   * the caller's own lists, not the page's: anyone may start branches of a page (anonymous ones
   * too), and a page's list read newest first would let a flood of them hide a user's own.
   */
  async visibleOfPage(ctx: RequestContext, domain: string, title: string, caller: Caller): Promise<ListedBranch[]> {
    if (caller.user === null) return [];
    const { own, shared } = await this.ofUser(ctx, domain, caller.user);
    const seen = new Set<string>();
    return [...own, ...shared]
      .filter((b) => b.page === title && b.state === 'open' && !seen.has(b.branch) && seen.add(b.branch))
      .sort((a, b) => compareTids(b.branch, a.branch));
  }

  /** A user's own branches and those shared with them, on every page. */
  ofUser(ctx: RequestContext, domain: string, user: string): Promise<{ own: ListedBranch[]; shared: ListedBranch[] }> {
    return this.tablesOf(domain).lists.ofUser(ctx, user);
  }

  /** A new version over `over` (the version its writer read): 412 if another came first. */
  async update(ctx: RequestContext, domain: string, head: BranchHead, over: string, input: BranchInput, caller: Caller): Promise<{ head: BranchHead; version: BranchVersion }> {
    if (over !== head.latest_tid) {
      // Remembered from before another process wrote, or lost already (then no content is made).
      const now = await this.freshHead(ctx, domain, head.branch);
      if (!now) throw notFound(head.branch);
      if (over !== now.latest_tid) throw changed(head.branch, over, now.latest_tid);
      head = now;
    }
    if (head.state !== 'open') throw notOpen(head);
    const baseRevid = input.baseRevid ?? head.base_revid;
    return this.writeVersion(ctx, domain, head, over, await this.contentOf(ctx, domain, head.page, { ...input, baseRevid: baseRevid ?? undefined }, caller, baseRevid));
  }

  private async writeVersion(ctx: RequestContext, domain: string, head: BranchHead, over: string, content: VersionContent): Promise<{ head: BranchHead; version: BranchVersion }> {
    const t = this.tablesOf(domain);
    const tid = tidAfter(over);
    const updated = new Date(tidTime(tid)).toISOString();
    if (!(await t.branches.update(ctx, head.branch, over, tid, content, updated))) {
      const now = await this.freshHead(ctx, domain, head.branch);
      if (now && now.state !== 'open') throw notOpen(now);
      throw changed(head.branch, over, now?.latest_tid ?? null);
    }
    const next: BranchHead = { ...head, latest_tid: tid, updated, base_revid: content.base_revid };
    this.remember(domain, next);
    // The lists and the expiry index are moved on when the expiry moves to another day: true to
    // the day, at one conditional write per update within a day.
    const [expires, before] = [this.expiresAt(updated), this.expiresAt(head.updated)];
    if (dayOf(expires) !== dayOf(before)) await Promise.all([t.lists.record(ctx, next, head), t.expiry.record(ctx, head.branch, expires, listsOf(next), before)]);
    return { head: next, version: { tid, ...content } };
  }

  /** One version (default: the latest); 404 if the branch has no such version. */
  async version(ctx: RequestContext, domain: string, head: BranchHead, tid = head.latest_tid): Promise<BranchVersion> {
    const version = await this.tablesOf(domain).branches.version(ctx, head.branch, tid);
    if (!version) throw new HttpError(404, 'branch-version-not-found', `Branch ${head.branch} has no version ${tid}.`);
    return version;
  }

  /**
   * A version's HTML: as it was edited (2.x with data-mw inline on a 2.x client's request, when it
   * came with data-mw apart), or rendered from its wikitext by the wiki's Parsoid once and kept
   * (2.x, what a rest_v1 client edits).
   */
  async html(ctx: RequestContext, domain: string, head: BranchHead, version: BranchVersion, want: HtmlVersion): Promise<{ html: string; type: string }> {
    if (version.html !== null) {
      const dataMw = version.data_mw as { ids?: Record<string, unknown> } | null;
      if (want === '2' && dataMw?.ids) return { html: toHtml2(version.html, dataMw), type: HTML_2_TYPE };
      return { html: version.html, type: version.html_type ?? 'text/html; charset=utf-8' };
    }
    const part = await this.service.wiki(domain).transform('wikitext', 'html', { title: head.page }, { wikitext: version.wikitext ?? '' });
    const html = part.body.toString('utf8');
    await this.tablesOf(domain).branches.keepHtml(ctx, head.branch, version, html, part.contentType).catch((err) => this.log.warn({ err, branch: head.branch }, 'keeping a branch version\'s HTML failed'));
    return { html, type: part.contentType };
  }

  history(ctx: RequestContext, domain: string, head: BranchHead, limit: number, next?: string) {
    return this.tablesOf(domain).branches.versions(ctx, head.branch, limit, next);
  }

  /** Abandons the branch: it leaves its page's list; its content stays until it expires. */
  async abandon(ctx: RequestContext, domain: string, head: BranchHead): Promise<BranchHead> {
    if (head.state === 'abandoned') return head;
    if (head.state !== 'open') throw notOpen(head);
    // Only an open branch: one merged meanwhile stays merged.
    if (!(await this.tablesOf(domain).branches.setMeta(ctx, head, { state: 'abandoned' }, { whileState: 'open' }))) {
      const now = await this.freshHead(ctx, domain, head.branch);
      throw notOpen(now ?? head);
    }
    const next: BranchHead = { ...head, state: 'abandoned' };
    this.remember(domain, next);
    await this.relist(ctx, domain, next, head);
    return next;
  }

  /** Shares the branch with `user` to read or write, or (null) no longer. */
  async share(ctx: RequestContext, domain: string, head: BranchHead, caller: Caller, user: string, access: Access | null): Promise<BranchHead> {
    if (head.owner === null || head.owner !== caller.user) throw new HttpError(403, 'not-branch-owner', 'Only the owner of a branch shares it (an anonymous branch is shared by its id).');
    const shares = { ...head.shares };
    if (access === null) delete shares[user];
    else shares[user] = access;
    // Its metadata is read with every version: a review circle, not a mailing list.
    if (Object.keys(shares).length > MAX_SHARES) throw badRequest(`A branch is shared with ${MAX_SHARES} users at most.`, 'too-many-shares');
    return this.changeMeta(ctx, domain, head, { shares });
  }

  private async changeMeta(ctx: RequestContext, domain: string, head: BranchHead, changes: Partial<BranchHead>): Promise<BranchHead> {
    const t = this.tablesOf(domain);
    const next = { ...head, ...changes };
    // The lists it joins (a moved page's, a new reader's) are written before the branch, so a
    // client that reads the change from the branch finds it listed there too; the expiry entry
    // names them meanwhile, and those it left once it has left them.
    const joined = listsOf(next).filter((list) => !listsOf(head).includes(list));
    if (joined.length > 0) {
      await t.expiry.record(ctx, head.branch, this.expiresAt(head.updated), [...listsOf(head), ...joined]);
      await t.lists.record(ctx, next);
    }
    await t.branches.setMeta(ctx, head, changes);
    this.remember(domain, next);
    await this.relist(ctx, domain, next, head);
    return next;
  }

  /** The branch's lists after a change of its metadata, and the lists its expiry entry names. */
  private async relist(ctx: RequestContext, domain: string, next: BranchHead, before: BranchHead): Promise<void> {
    const t = this.tablesOf(domain);
    await Promise.all([t.lists.record(ctx, next, before), t.expiry.record(ctx, next.branch, this.expiresAt(next.updated), listsOf(next))]);
  }

  /**
   * Saves the branch's latest version to the wiki as the caller, through the save path: one
   * transaction records the revision, its render, and the branch merged. A promote tried again
   * (after a crash) finds the wiki holding its text already: the wiki changes nothing, and the
   * branch is marked merged with that revision.
   */
  async promote(ctx: RequestContext, domain: string, head: BranchHead, caller: Caller, comment: string | undefined, over?: string): Promise<SaveResult & { branch: string }> {
    if (head.state !== 'open') throw notOpen(head);
    if (over !== undefined && over !== head.latest_tid) throw changed(head.branch, over, head.latest_tid);
    const version = await this.version(ctx, domain, head);
    const merged = await this.merges.withCurrent(ctx, domain, head, version);
    const result = await this.saver.save(ctx, domain, {
      title: head.page,
      wikitext: merged.text,
      baseRevid: merged.baseRevid ?? undefined,
      comment: comment ?? version.comment ?? undefined,
      credentials: caller.credentials,
      alsoRecord: (rev) => [step(domain, 'branch', BRANCH_MERGED_STEP, { branch: head.branch, rev, tid: version.tid })],
    });
    // Nothing new for the wiki (its text is the branch's already): no transaction ran.
    if (result.status === 200) await this.markMerged(ctx, domain, head.branch, result.rev, version.tid);
    return { ...result, branch: head.branch };
  }

  /**
   * Brings the branch up to the page's current revision (three-way merge): a new version based
   * on it, or 409 with the conflicting hunks and nothing written.
   */
  async rebase(ctx: RequestContext, domain: string, head: BranchHead, caller: Caller, over?: string): Promise<{ head: BranchHead; version: BranchVersion; unchanged: boolean }> {
    if (head.state !== 'open') throw notOpen(head);
    const from = over ?? head.latest_tid;
    const version = await this.version(ctx, domain, head, from);
    const merged = await this.merges.withCurrent(ctx, domain, head, version);
    if (merged.baseRevid === version.base_revid) return { head, version, unchanged: true };
    const content: VersionContent = { base_revid: merged.baseRevid, base_tid: null, wikitext: merged.text, html: null, html_type: null, data_mw: null, author: caller.user, comment: 'rebase' };
    return { ...(await this.writeVersion(ctx, domain, head, from, content)), unchanged: false };
  }

  /**
   * The save of version `tid` made revision `rev`: the branch is merged (idempotent). If a later
   * version was written meanwhile, the branch stays open with that work, and says what was merged.
   */
  async markMerged(ctx: RequestContext, domain: string, branch: string, rev: number, tid: string): Promise<BranchHead | undefined> {
    const t = this.tablesOf(domain);
    const head = await t.branches.head(ctx, branch);
    if (!head || (head.merged_tid === tid && head.merged_rev === rev)) return head;
    const done = await t.branches.setMeta(ctx, head, { state: 'merged', merged_rev: rev, merged_tid: tid }, { over: tid });
    const next: BranchHead = done ? { ...head, state: 'merged', merged_rev: rev, merged_tid: tid } : { ...head, merged_rev: rev, merged_tid: tid };
    this.remember(domain, next);
    if (!done) await t.branches.setMeta(ctx, head, { merged_rev: rev, merged_tid: tid });
    await this.relist(ctx, domain, next, head);
    return next;
  }

  /** The page moved: its open branches go with it (their old URLs redirect to the new title). */
  async pageMoved(ctx: RequestContext, domain: string, from: string, to: string): Promise<number> {
    const t = this.tablesOf(domain);
    let moved = 0;
    // Every page of the list, however many branches anyone started: each moved is written out of it.
    for await (const listedPage of t.lists.allOfPage(ctx, from)) {
      for (const listed of listedPage) {
        const head = await t.branches.head(ctx, listed.branch);
        if (!head || head.page !== from) continue;
        await this.changeMeta(ctx, domain, head, { page: to });
        moved++;
      }
    }
    return moved;
  }

}

/** Users one branch is shared with, at most. */
const MAX_SHARES = 50;

/** How long a head read or written here stands in for storage's, for a change. */
const RECENT_MS = 1000;

const changed = (branch: string, over: string, latest: string | null) =>
  new HttpError(412, 'branch-changed', `Branch ${branch} has a newer version than ${over}: read it, and edit that.`, { extensions: { latest_tid: latest } });

