import { HttpError } from '../errors.js';
import { upstreamFetch } from './fetch.js';

/** A revision as the Action API (formatversion=2) describes it. */
export interface ApiRevision {
  revid: number;
  parentid?: number;
  minor?: boolean;
  user?: string;
  userid?: number;
  userhidden?: boolean;
  timestamp: string;
  size?: number;
  sha1?: string;
  sha1hidden?: boolean;
  comment?: string;
  commenthidden?: boolean;
  slots?: { main?: { contentmodel?: string; texthidden?: boolean } };
}

export interface ApiPage {
  pageid?: number;
  ns: number;
  title: string;
  missing?: boolean;
  invalid?: boolean;
  redirect?: boolean;
  lastrevid?: number;
  revisions?: ApiRevision[];
}

export interface SiteInfo {
  general: Record<string, unknown> & { lang: string; legaltitlechars: string; case: string };
  namespaces: Record<string, unknown>;
  namespacealiases: unknown[];
  specialpagealiases: unknown[];
}

const RVPROP = 'ids|timestamp|user|userid|size|sha1|comment|flags|contentmodel';

/** The wiki's Action API: site info and revision metadata. */
export class ActionApi {
  constructor(
    private readonly url: string,
    private readonly userAgent: string,
    private readonly count: (endpoint: string) => void,
  ) {}

  private async query(params: Record<string, string>): Promise<Record<string, any>> {
    this.count('action');
    const qs = new URLSearchParams({ format: 'json', formatversion: '2', errorformat: 'plaintext', ...params });
    const res = await upstreamFetch(`${this.url}?${qs}`, this.userAgent, { timeoutMs: 15_000 });
    let json: Record<string, any>;
    try {
      json = JSON.parse(res.body.toString('utf8'));
    } catch {
      throw new HttpError(502, 'upstream-error', `The Action API answered ${res.status} with something that is not JSON.`);
    }
    if (json.errors?.length) {
      const { code, text } = json.errors[0] as { code?: string; text?: string };
      // A continuation the client handed us back, forged or stale: its mistake, not the wiki's.
      if (code === 'badcontinue') throw new HttpError(400, 'invalid-paging-token', 'The paging token (next) is not valid for this listing.');
      throw new HttpError(502, 'upstream-error', `The Action API failed: ${text ?? code}`);
    }
    return json;
  }

  async siteInfo(): Promise<SiteInfo> {
    const json = await this.query({ action: 'query', meta: 'siteinfo', siprop: 'general|namespaces|namespacealiases|specialpagealiases' });
    return json.query as SiteInfo;
  }

  /** A page with its newest revision, or the revision current at `before` (ISO time). */
  async page(title: string, options: { before?: string } = {}): Promise<ApiPage> {
    const params: Record<string, string> = { action: 'query', prop: 'revisions|info', titles: title, rvprop: RVPROP, rvslots: 'main', rvlimit: '1' };
    if (options.before) Object.assign(params, { rvstart: options.before, rvdir: 'older' });
    return (await this.query(params)).query.pages[0] as ApiPage;
  }

  /** The page a revision belongs to now (after moves), with that revision; undefined if unknown. */
  async revision(revid: number): Promise<ApiPage | undefined> {
    const json = await this.query({ action: 'query', prop: 'revisions|info', revids: String(revid), rvprop: RVPROP, rvslots: 'main' });
    if (json.query?.badrevids) return undefined;
    return json.query?.pages?.[0] as ApiPage | undefined;
  }

  /** One page of a page's history, newest first. */
  async history(title: string, limit: number, cont?: string): Promise<{ page: ApiPage; cont?: string }> {
    const params: Record<string, string> = { action: 'query', prop: 'revisions|info', titles: title, rvprop: RVPROP, rvslots: 'main', rvlimit: String(limit) };
    if (cont) params.rvcontinue = cont;
    const json = await this.query(params);
    return { page: json.query.pages[0] as ApiPage, cont: json.continue?.rvcontinue as string | undefined };
  }
}
