import type { RequestContext } from '../../../router/types.js';
import { HttpError, notFound } from '../../../util/errors.js';
import type { PageService } from '../read/page-service.js';
import { storedGzip } from '../../../util/compression.js';
import { absoluteUrl } from '../snapshot/enterprise.js';
import { wikiFacts, type WikiFacts } from '../model/wiki-facts.js';
import type { Listed } from '../snapshot/titles-then.js';
import { SnapshotWriter } from '../snapshot/snapshot-writer.js';
import { htmlStructure } from '../model/html-structure.js';

/** What Wikimedia Enterprise's APIs read of a page, through the page module's door. */
export interface EnterpriseReads {
  /** The page a name names, as the wiki writes its title; a 404 for a name no page can have. */
  titleOf(domain: string, name: string): Promise<string>;
  /**
   * A page's record as a line of a snapshot taken at `at` (ms; default now): the same bytes a
   * snapshot of that moment holds for it. A 404 if it had no visible revision then.
   */
  article(ctx: RequestContext, domain: string, name: string, at?: number): Promise<string>;
  /**
   * The same as On-demand answers it whole: `[line]` (the line's newline before the bracket), gzip
   * members as a snapshot's archive holds them, sent compressed as they are.
   */
  articleGz(ctx: RequestContext, domain: string, name: string, at?: number): Promise<Buffer>;
  /** Enterprise's structured contents of a page's latest revision, made from its stored render. */
  structured(ctx: RequestContext, domain: string, name: string): Promise<Record<string, unknown>>;
}

const OPEN = storedGzip(Buffer.from('['));
const CLOSE = storedGzip(Buffer.from(']'));

type Sources = Pick<PageService, 'renderer' | 'renders' | 'revisions' | 'wiki' | 'facts'>;

/** Fields of the article record a structured record carries, as on-demand gives them. */
const STRUCTURED_FIELDS = ['name', 'identifier', 'abstract', 'description', 'url', 'date_created', 'date_modified', 'version', 'is_part_of', 'in_language', 'license', 'image', 'main_entity'];

export function enterpriseReads(service: Sources): EnterpriseReads {
  /** The title as the wiki writes it; a name no page can have is a 404, as Enterprise answers it. */
  const titleOf = async (domain: string, name: string) => {
    try {
      return await service.wiki(domain).normalize(name.replace(/ /g, '_'));
    } catch (e) {
      if (e instanceof HttpError && e.status < 500) throw notFound(`${name.slice(0, 255)} is not a page of this wiki.`, 'not-found');
      throw e;
    }
  };
  /** What a page's line is read with: the snapshot's writer for one page, at the moment asked (default now). */
  const lineOf = async <T>(ctx: RequestContext, domain: string, name: string, at: number | undefined, read: (writer: SnapshotWriter, facts: WikiFacts, entry: Listed, moment: number) => Promise<T | undefined>): Promise<T> => {
    const title = await titleOf(domain, name);
    const moment = at ?? Math.floor(Date.now() / 1000) * 1000;
    // Now: the latest revision as the service knows it (kept current by following the wiki).
    const latest = at === undefined ? await service.revisions.latest(ctx, domain, title, false) : undefined;
    const entry = latest?.timestamp ? { title: latest.title, latest: { rev: latest.rev, timestamp: latest.timestamp, hidden: !!latest.text_hidden } } : { title };
    const line = await read(new SnapshotWriter(service, domain), wikiFacts(await service.wiki(domain).siteInfo()), entry, moment);
    if (line === undefined) throw notFound(`${name.slice(0, 255)} has no visible revision${at === undefined ? '' : ' at that time'}.`, 'not-found');
    return line;
  };
  const article = (ctx: RequestContext, domain: string, name: string, at?: number) =>
    lineOf(ctx, domain, name, at, async (writer, facts, entry, moment) => (await writer.page(ctx, facts, entry, { at: moment })).line);
  const articleGz = (ctx: RequestContext, domain: string, name: string, at?: number) =>
    lineOf(ctx, domain, name, at, async (writer, facts, entry, moment) => {
      const { line } = await writer.packed(ctx, facts, entry, { at: moment }, { deleted: [] });
      return line && Buffer.concat([OPEN, ...line.data, CLOSE]);
    });
  return {
    titleOf,
    article,
    articleGz,
    async structured(ctx, domain, name) {
      const record = JSON.parse(await article(ctx, domain, name)) as Record<string, unknown> & { article_body: { html: string } };
      const facts = wikiFacts(await service.wiki(domain).siteInfo());
      const structure = htmlStructure(record.article_body.html, (href) => absoluteUrl(facts, href));
      const fields = Object.fromEntries(STRUCTURED_FIELDS.filter((f) => record[f] !== undefined).map((f) => [f, record[f]]));
      return {
        ...fields,
        ...(record.image ? { main_image: record.image } : {}),
        infoboxes: structure.infoboxes,
        sections: structure.sections,
        ...(structure.references.length ? { references: structure.references } : {}),
      };
    },
  };
}
