import { createHash } from 'node:crypto';
import { BoundedMap } from '../../../util/bounded-map.js';
import { HttpError } from '../../../util/errors.js';
import type { RequestContext, RouteRequest } from '../../../router/types.js';
import type { Credentials } from '../../../upstream/action-api.js';
import type { Wiki } from '../../../upstream/wiki.js';
import { forwardedCredentials } from '../edit/save-routes.js';

/** Who asks: a wiki user's name, or null (anonymous), with what identifies them to the wiki. */
export interface Caller {
  user: string | null;
  credentials: Credentials;
  /** Until when (ms since the epoch) the wiki's word on who they are is taken as it stands. */
  knownUntil: number;
}

/** How long the wiki's word on who a session is, or on its token, is kept. */
const KNOWN_MS = 60_000;

/**
 * The caller of a branch route, as the wiki knows them: their Cookie or Authorization is sent to
 * `meta=userinfo` (once a minute per session). The service's own admin credential is never
 * anyone's identity.
 *
 * A browser sends its cookies with any form a web page posts, so a change made as a user known
 * only by a Cookie carries that user's own CSRF token (`csrf_token` or `X-CSRF-Token`), checked by
 * the wiki (`action=checktoken`): without one it is 403, as for saves.
 */
export class BranchCallers {
  private readonly known = new BoundedMap<string, { user: Promise<string | null>; until: number }>(10_000);
  private readonly tokens = new BoundedMap<string, { valid: Promise<boolean>; until: number }>(10_000);

  constructor(private readonly wiki: (domain: string) => Wiki) {}

  /** Who the request's credentials belong to. */
  async reader(req: Pick<RouteRequest, 'headers' | 'domain'>, ctx: RequestContext): Promise<Caller> {
    const credentials = forwardedCredentials(req, ctx);
    if (req.headers['x-csrf-token']) credentials.csrfToken = req.headers['x-csrf-token'];
    const { user, until } = this.userOf(req.domain, credentials);
    return { user: await user, credentials, knownUntil: until };
  }

  /** Who asks for a change; a Cookie session must prove it meant to (its CSRF token). */
  async writer(req: Pick<RouteRequest, 'headers' | 'domain'>, ctx: RequestContext, bodyToken?: unknown): Promise<Caller> {
    const caller = await this.reader(req, ctx);
    if (typeof bodyToken === 'string' && bodyToken) caller.credentials.csrfToken = bodyToken;
    const { cookie, authorization, csrfToken } = caller.credentials;
    if (caller.user !== null && cookie && !authorization) {
      if (!csrfToken) {
        throw new HttpError(403, 'bad-token', 'A change made with a Cookie needs your own CSRF token from the wiki (csrf_token in the body, or X-CSRF-Token).');
      }
      if (!(await this.tokenValid(req.domain, caller.credentials, csrfToken))) {
        throw new HttpError(403, 'bad-token', 'The CSRF token is not the one of your session on the wiki.', { extensions: { wiki_code: 'badtoken' } });
      }
    }
    return caller;
  }

  /** A user name as the wiki spells it (`meta=userinfo` names users with spaces, first letter as the wiki cases it). */
  async userName(domain: string, name: string): Promise<string> {
    let title: string;
    try {
      title = await this.wiki(domain).normalize(`User:${name}`);
    } catch (e) {
      if (e instanceof HttpError && e.status < 500) throw new HttpError(400, 'invalid-user', `${name.slice(0, 100)} is not a user name.`);
      throw e;
    }
    const user = title.slice(title.indexOf(':') + 1).replace(/_/g, ' ');
    if (!user || user.includes('/')) throw new HttpError(400, 'invalid-user', `${name.slice(0, 100)} is not a user name.`);
    return user;
  }

  private keyOf(domain: string, credentials: Credentials, extra = ''): string {
    return createHash('sha256').update(`${domain}\u0000${credentials.cookie ?? ''}\u0000${credentials.authorization ?? ''}\u0000${extra}`).digest('base64url');
  }

  private userOf(domain: string, credentials: Credentials): { user: Promise<string | null>; until: number } {
    if (!credentials.cookie && !credentials.authorization) return { user: Promise.resolve(null), until: Infinity };
    const key = this.keyOf(domain, credentials);
    const now = Date.now();
    const hit = this.known.get(key);
    if (hit && hit.until > now) return hit;
    const known = { user: this.wiki(domain).api.userInfo(credentials).then((u) => (u.anon ? null : u.name)), until: now + KNOWN_MS };
    this.known.set(key, known);
    known.user.catch(() => this.known.delete(key));
    return known;
  }

  private tokenValid(domain: string, credentials: Credentials, token: string): Promise<boolean> {
    const key = this.keyOf(domain, credentials, token);
    const now = Date.now();
    const hit = this.tokens.get(key);
    if (hit && hit.until > now) return hit.valid;
    const valid = this.wiki(domain).api.checkCsrfToken(token, credentials);
    this.tokens.set(key, { valid, until: now + KNOWN_MS });
    valid.catch(() => this.tokens.delete(key));
    return valid;
  }
}
