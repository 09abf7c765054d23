import { HttpError } from '../../../util/errors.js';
import type { RequestContext } from '../../../router/types.js';
import type { PageService } from '../read/page-service.js';
import { partOf } from '../model/render.js';
import { mergeWikitext, type ConflictHunk } from '../model/three-way-merge.js';
import type { BranchHead, BranchVersion } from '../tables/page-branches.js';
import { gunzip } from '../../../util/compression.js';

/** What merges read: the revisions known and their renders. */
export type MergeSources = Pick<PageService, 'renderer' | 'revisions'>;

/** A branch version merged with the page as it is now. */
export interface Merged {
  text: string;
  /** The revision the text is based on now. */
  baseRevid: number | null;
}

/** Branch versions brought up to the page's current revision (what promote and rebase share). */
export class CurrentMerges {
  constructor(private readonly service: MergeSources) {}

  /** The page's latest revision (`force`: as the wiki has it now), or null if the page does not exist. */
  async currentRevid(ctx: RequestContext, domain: string, title: string, force: boolean): Promise<number | null> {
    try {
      return (await this.service.revisions.latest(ctx, domain, title, force)).rev;
    } catch (e) {
      if (e instanceof HttpError && e.status === 404) return null;
      throw e;
    }
  }

  /** A revision's wikitext, from its stored render (rendered once if it has none). */
  private async wikitextOf(ctx: RequestContext, domain: string, title: string, rev: number): Promise<string> {
    const row = await this.service.revisions.revision(ctx, domain, title, rev, false);
    const render = await this.service.renderer.render(ctx, domain, row, false);
    return (await gunzip(partOf(render, 'wikitext'))).toString('utf8');
  }

  /**
   * The version merged with what the page became since its base: as it is if the page has not
   * moved on, else the three-way merge of base, branch and current (409 with the hunks where both
   * changed the same lines).
   */
  async withCurrent(ctx: RequestContext, domain: string, head: BranchHead, version: BranchVersion): Promise<Merged> {
    const ours = version.wikitext ?? '';
    const current = await this.currentRevid(ctx, domain, head.page, true);
    if (current === version.base_revid) return { text: ours, baseRevid: current };
    if (current === null) throw new HttpError(409, 'page-deleted', `${head.page} does not exist any more: the branch cannot be merged into it.`);
    const [base, theirs] = await Promise.all([
      version.base_revid === null ? Promise.resolve('') : this.wikitextOf(ctx, domain, head.page, version.base_revid),
      this.wikitextOf(ctx, domain, head.page, current),
    ]);
    const merged = mergeWikitext(base, ours, theirs);
    if (!merged.clean) throw mergeConflict(head, current, merged.conflicts);
    return { text: merged.text, baseRevid: current };
  }
}

function mergeConflict(head: BranchHead, current: number, conflicts: ConflictHunk[]): HttpError {
  return new HttpError(409, 'merge-conflict', `The branch and revision ${current} of ${head.page} changed the same lines: resolve the conflicts in the branch, then promote it.`, {
    extensions: { latest_revid: current, conflicts },
  });
}
