import { decodeToken, encodeToken } from '../model/paging-token.js';
import { badRequest, notFound } from '../../../util/errors.js';
import type { RequestContext } from '../../../router/types.js';
import { isUnavailable } from '../../../upstream/wiki.js';
import { revisionMetadata, type RevisionRow } from '../model/revision.js';
import type { ApiPage } from '../../../upstream/action-api.js';
import type { WikiDirectory } from '../../../upstream/wikis.js';
import type { PageRevisions } from '../tables/page-revisions.js';
import type { PageCaches } from './page-caches.js';

/** What the history needs of the revisions the service knows (KnownRevisions). */
interface Known {
  readonly caches: PageCaches;
  readonly wikis: WikiDirectory;
  table(domain: string): PageRevisions;
  checkedWithWiki(ctx: RequestContext, domain: string, row: RevisionRow): Promise<RevisionRow>;
  servable(row: RevisionRow): RevisionRow;
  storeWikiPage(ctx: RequestContext, domain: string, title: string, page: ApiPage): Promise<void>;
}

/** Keys of the wiki's remembered "not found" answers. */
export const missingPage = (domain: string, title: string) => `page\u0000${domain}\u0000${title}`;
export const missingRevision = (domain: string, revid: number) => `rev\u0000${domain}\u0000${revid}`;

/**
 * A page's revisions over time: its history a page at a time, and the revision current at a
 * moment (`?ts=`), from storage where it proves the answer, else from the wiki; each revision the
 * wiki names is stored as seen (through KnownRevisions, which keeps them in step with the wiki).
 */
export class RevisionHistory {
  constructor(private readonly known: Known) {}

  /** One page of the page's history, from the wiki (it follows moves); each revision is stored as seen. */
  async history(ctx: RequestContext, domain: string, title: string, limit: number, next: string | undefined): Promise<{ items: Record<string, unknown>[]; next?: string }> {
    const token = next === undefined ? undefined : (decodeToken(next) as { c?: unknown } | undefined)?.c;
    if (next !== undefined && (typeof token !== 'string' || !/^[\w|:-]{1,200}$/.test(token))) throw badRequest('The paging token (next) is malformed.', 'invalid-paging-token');
    const cont = token as string | undefined;
    const { page, cont: more } = await this.known.caches.unlessMissing(missingPage(domain, title), false, async () => {
      const answer = await this.known.wikis.of(domain).api.history(title, limit, cont);
      if (answer.page.missing || answer.page.invalid) {
        const known = await this.known.table(domain).newest(ctx, title);
        if (known) await this.known.table(domain).tombstone(ctx, title);
        throw notFound(`The wiki has no page ${title}.`, 'page-not-found');
      }
      return answer;
    });
    const revisions = page.revisions ?? [];
    await this.known.storeWikiPage(ctx, domain, title, page);
    const ids = revisions.map((r) => r.revid);
    const rows = ids.length ? await this.known.table(domain).range(ctx, title, Math.min(...ids), Math.max(...ids)) : [];
    const byRev = new Map(rows.map((r) => [r.rev, r]));
    return {
      items: ids.map((id) => byRev.get(id)).filter((r): r is RevisionRow => r !== undefined).map(revisionMetadata),
      next: more ? encodeToken({ c: more }) : undefined,
    };
  }

  /** The revision that was current at `ms` (by revision timestamp). */
  async revisionAt(ctx: RequestContext, domain: string, title: string, ms: number): Promise<RevisionRow> {
    const revs = this.known.table(domain);
    // Where storage proves which revision it was, the wiki is not asked (its flags still are, when due).
    const stored = await revs.provenCurrentAt(ctx, title, ms);
    if (stored) return this.known.checkedWithWiki(ctx, domain, stored);
    try {
      const page = await this.known.caches.unlessMissing(missingPage(domain, title), false, async () => {
        const answer = await this.known.wikis.of(domain).api.page(title, { before: new Date(ms).toISOString() });
        if (answer.missing || answer.invalid) throw notFound(`The wiki has no page ${title}.`, 'page-not-found');
        return answer;
      });
      if (!page.revisions?.length) throw notFound(`${title} had no revision at ${new Date(ms).toISOString()}.`, 'no-revision-at-time');
      await this.known.storeWikiPage(ctx, domain, title, page);
      return this.known.servable((await revs.get(ctx, title, page.revisions[0]!.revid))!);
    } catch (e) {
      if (!isUnavailable(e)) throw e;
      // The wiki is down: answer from the revisions stored so far.
      const row = await revs.currentAt(ctx, title, ms);
      if (!row) throw e;
      return this.known.servable(row);
    }
  }
}
