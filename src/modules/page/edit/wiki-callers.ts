import { createHash } from 'node:crypto';
import type { Credentials } from '../../../upstream/action-api.js';
import type { Wiki } from '../../../upstream/wiki.js';
import { BoundedMap } from '../../../util/bounded-map.js';
import { HttpError } from '../../../util/errors.js';
import { countedUnder, RateLimits, type ActionLimits } from './rate-limits.js';

/** A session as the wiki knows it: the user (null: anonymous), whether they may edit, and its rate limits that apply to them, by action. */
export interface KnownCaller {
  user: string | null;
  limits: Record<string, ActionLimits>;
  /** Has the wiki's `edit` right. */
  mayEdit: boolean;
  /** Blocked from editing the whole wiki. */
  blocked: boolean;
}

/** How long the wiki's word on who a session is, and on its limits, is kept. */
export const KNOWN_MS = 60_000;

/**
 * MediaWiki's own defaults for an anonymous caller (`$wgRateLimits`), for while the wiki cannot be
 * asked: the actions the service limits.
 */
const MEDIAWIKI_ANON_LIMITS: Record<string, ActionLimits> = {
  edit: { ip: { hits: 8, seconds: 60 } },
  stashbasehtml: { ip: { hits: 5, seconds: 60 } },
};

/**
 * Callers as the wiki knows them: who a forwarded Cookie or Authorization belongs to, their
 * rights, blocks and the wiki's own rate limits for them (`meta=userinfo`, once a minute per
 * session; for anonymous callers once a minute per address), and their actions counted against
 * those limits as MediaWiki's rate limiter counts them (see rate-limits.ts).
 */
export class WikiCallers {
  private readonly known = new BoundedMap<string, { who: Promise<KnownCaller>; until: number }>(10_000);
  private readonly counts = new RateLimits();

  constructor(private readonly wiki: (domain: string) => Wiki) {}

  /** A key for what the credentials say (never the credentials themselves), for caches per session. */
  keyOf(domain: string, credentials: Credentials, extra = ''): string {
    return createHash('sha256').update(`${domain}\u0000${credentials.cookie ?? ''}\u0000${credentials.authorization ?? ''}\u0000${extra}`).digest('base64url');
  }

  /**
   * Who a session is, asked of the wiki once a minute. Without a session: anonymous, with the
   * rights, block and limits the wiki gives an anonymous caller from that address (its forwarded
   * chain sent on, as for an edit, so a blocked address is blocked here too), asked once a minute
   * per address, or MediaWiki's defaults (may edit, 8 edits a minute per address) while the wiki
   * cannot be asked.
   */
  whoIs(domain: string, credentials: Credentials): { who: Promise<KnownCaller>; until: number } {
    const anonymous = !credentials.cookie && !credentials.authorization;
    const key = anonymous ? `anonymous\u0000${domain}\u0000${credentials.forwardedFor ?? ''}` : this.keyOf(domain, credentials);
    const now = Date.now();
    const hit = this.known.get(key);
    if (hit && hit.until > now) return hit;
    const asked = this.wiki(domain).api.userInfo(anonymous ? { ...(credentials.forwardedFor ? { forwardedFor: credentials.forwardedFor } : {}) } : credentials).then((u): KnownCaller => ({
      user: u.anon ? null : u.name, limits: u.rateLimits ?? {}, mayEdit: (u.rights ?? []).includes('edit'), blocked: !!u.blocked,
    }));
    const who = anonymous ? asked.catch((): KnownCaller => ({ user: null, limits: MEDIAWIKI_ANON_LIMITS, mayEdit: true, blocked: false })) : asked;
    this.known.set(key, { who, until: now + KNOWN_MS });
    who.catch(() => this.known.delete(key));
    return { who, until: now + KNOWN_MS };
  }

  /**
   * Counts one `action` of `caller` (from the address `client`) against the wiki's limits for it;
   * past one, a 429 `rate-limited` with `Retry-After`.
   */
  count(domain: string, action: string, caller: KnownCaller, client: string | undefined): void {
    const limits = caller.limits[action];
    if (!limits) return;
    const wait = this.counts.take(`${domain}\u0000${action}`, countedUnder(caller.user, client, limits));
    if (wait === undefined) return;
    throw new HttpError(429, 'rate-limited', `Too many ${action === 'edit' ? 'changes' : `'${action}' requests`} in a short time: the wiki's own rate limits apply. Try again in ${wait} s.`, {
      headers: { 'retry-after': String(wait) },
      extensions: { action },
    });
  }

  /** `count` for the caller the credentials name. */
  async limit(domain: string, action: string, credentials: Credentials, client: string | undefined): Promise<void> {
    this.count(domain, action, await this.whoIs(domain, credentials).who, client);
  }
}
