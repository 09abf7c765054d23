import { HttpError } from '../errors.js';
import { upstreamFetch } from './fetch.js';

/** The pagebundle profile that returns data-mw separately from the HTML. */
const PAGEBUNDLE_ACCEPT = 'application/json; charset=utf-8; profile="https://www.mediawiki.org/wiki/Specs/pagebundle/999.0.0"';

export interface Part {
  contentType: string;
  body: Buffer;
}

export interface PageBundle {
  html: Part;
  dataParsoid: Part;
  dataMw: Part;
}

export type ParsoidFailure = 'not-found' | 'hidden';

/** Parsoid's REST endpoints of a wiki (`rest.php/{domain}/v3`). */
export class ParsoidClient {
  constructor(
    private readonly restBase: string,
    private readonly parsoidDomain: string,
    private readonly userAgent: string,
    private readonly count: (endpoint: string) => void,
  ) {}

  private url(kind: string, title: string, revid: number): string {
    return `${this.restBase}/${this.parsoidDomain}/v3/page/${kind}/${encodeURIComponent(title)}/${revid}`;
  }

  private static failure(status: number, body: Buffer, what: string): HttpError {
    if (status === 404) {
      const hidden = /deleted or suppressed/.test(body.toString('utf8'));
      return new HttpError(404, hidden ? 'revision-hidden' : 'revision-not-found', `Parsoid: ${what} ${hidden ? 'is hidden' : 'was not found'}.`);
    }
    return new HttpError(502, 'upstream-error', `Parsoid answered ${status} for ${what}.`);
  }

  async pagebundle(title: string, revid: number): Promise<PageBundle> {
    this.count('parsoid');
    const res = await upstreamFetch(this.url('pagebundle', title, revid), this.userAgent, { headers: { accept: PAGEBUNDLE_ACCEPT }, timeoutMs: 120_000, retries: 1 });
    if (res.status !== 200) throw ParsoidClient.failure(res.status, res.body, `revision ${revid}`);
    const json = JSON.parse(res.body.toString('utf8')) as Record<string, { headers: Record<string, string>; body: unknown }>;
    const part = (name: string, fallback: string): Part => {
      const p = json[name];
      const body = p?.body ?? (name === 'data-mw' ? { ids: {} } : undefined);
      if (body === undefined) throw new HttpError(502, 'upstream-error', `Parsoid's pagebundle has no ${name}.`);
      return { contentType: p?.headers?.['content-type'] ?? fallback, body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)) };
    };
    return {
      html: part('html', 'text/html; charset=utf-8'),
      dataParsoid: part('data-parsoid', 'application/json; charset=utf-8'),
      dataMw: part('data-mw', 'application/json; charset=utf-8'),
    };
  }

  async wikitext(title: string, revid: number): Promise<Part> {
    this.count('parsoid-wikitext');
    const res = await upstreamFetch(this.url('wikitext', title, revid), this.userAgent, { timeoutMs: 30_000 });
    if (res.status !== 200) throw ParsoidClient.failure(res.status, res.body, `the wikitext of revision ${revid}`);
    return { contentType: res.headers.get('content-type') ?? 'text/plain; charset=utf-8', body: res.body };
  }
}
