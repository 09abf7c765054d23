import { BoundedMap } from '../../../util/bounded-map.js';
import { HttpError } from '../../../util/errors.js';
import type { RequestContext, RouteRequest } from '../../../router/types.js';
import type { Credentials } from '../../../upstream/action-api.js';
import type { Wiki } from '../../../upstream/wiki.js';
import { forwardedCredentials } from '../edit/save-routes.js';
import { KNOWN_MS, WikiCallers, type KnownCaller } from '../edit/wiki-callers.js';

/** Who asks: a wiki user's name, or null (anonymous), with what identifies them to the wiki. */
export interface Caller {
  user: string | null;
  credentials: Credentials;
  /** Until when (ms since the epoch) the wiki's word on who they are is taken as it stands. */
  knownUntil: number;
}

/**
 * The caller of a branch route, as the wiki knows them: their Cookie or Authorization is sent to
 * `meta=userinfo` (once a minute per session). The service's own admin credential is never
 * anyone's identity.
 *
 * A browser sends its cookies with any form a web page posts, so a change made as a user known
 * only by a Cookie carries that user's own CSRF token (`csrf_token` or `X-CSRF-Token`), checked by
 * the wiki (`action=checktoken`): without one it is 403, as for saves.
 *
 * A change needs what an edit of the wiki needs: the `edit` right and no block of the whole wiki
 * (403 otherwise), and counts against the wiki's own edit rate limits for that caller
 * (`uiprop=ratelimits`: none for those it exempts), as an edit would: a branch is stored for
 * weeks, so without them anyone could write drafts of a wiki closed to them, as fast as storage
 * takes them.
 */
export class BranchCallers {
  private readonly tokens = new BoundedMap<string, { valid: Promise<boolean>; until: number }>(10_000);

  constructor(private readonly wiki: (domain: string) => Wiki, private readonly callers: WikiCallers) {}

  /** Who the request's credentials belong to. */
  async reader(req: Pick<RouteRequest, 'headers' | 'domain'>, ctx: RequestContext): Promise<Caller> {
    return (await this.identified(req, ctx, false)).caller;
  }

  /** The caller, and (`withLimits`, or with a session) the wiki's word on them. */
  private async identified(req: Pick<RouteRequest, 'headers' | 'domain'>, ctx: RequestContext, withLimits: boolean): Promise<{ caller: Caller; known: KnownCaller }> {
    const credentials = forwardedCredentials(req, ctx);
    if (req.headers['x-csrf-token']) credentials.csrfToken = req.headers['x-csrf-token'];
    // Without a session the caller is anonymous: the wiki need not be asked to read.
    const anonymous = !credentials.cookie && !credentials.authorization;
    if (anonymous && !withLimits) return { caller: { user: null, credentials, knownUntil: Infinity }, known: { user: null, limits: {}, mayEdit: false, blocked: false } };
    const { who, until } = this.callers.whoIs(req.domain, credentials, ctx.client());
    const known = await who;
    return { caller: { user: known.user, credentials, knownUntil: anonymous ? Infinity : until }, known };
  }

  /**
   * Who asks for a change; a Cookie session must prove it meant to (its CSRF token); the change
   * counted against the wiki's edit rate limits for them (429 `rate-limited` past one).
   */
  async writer(req: Pick<RouteRequest, 'headers' | 'domain'>, ctx: RequestContext, bodyToken?: unknown): Promise<Caller> {
    const { caller, known } = await this.identified(req, ctx, true);
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
    // What the wiki would let them do to a page: a wiki closed to anonymous editing keeps its drafts closed too.
    if (known.blocked) throw new HttpError(403, 'blocked', 'You have been blocked from editing this wiki, so you cannot change drafts of it.', { extensions: { wiki_code: 'blocked' } });
    if (!known.mayEdit) {
      throw new HttpError(403, 'permission-denied', `${known.user === null ? 'Anonymous callers' : 'You'} may not edit pages of this wiki, so ${known.user === null ? 'they' : 'you'} cannot change drafts of it.`, { extensions: { wiki_code: 'permissiondenied' } });
    }
    this.callers.count(req.domain, 'edit', known, ctx.client());
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

  private tokenValid(domain: string, credentials: Credentials, token: string): Promise<boolean> {
    const key = this.callers.keyOf(domain, credentials, token);
    const now = Date.now();
    const hit = this.tokens.get(key);
    if (hit && hit.until > now) return hit.valid;
    const valid = this.wiki(domain).api.checkCsrfToken(token, credentials);
    this.tokens.set(key, { valid, until: now + KNOWN_MS });
    valid.catch(() => this.tokens.delete(key));
    return valid;
  }
}
