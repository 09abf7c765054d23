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
 * Sessions the wiki did not know (it answered them as anonymous, or refused them) that one address
 * may bring in a window: each costs a request to the wiki, so a client sending a new made-up
 * Cookie or token with every request would otherwise have the wiki asked for each. Past it, that
 * address's sessions not already known are refused (429) until the window lets one more through;
 * sessions already known go on being served. One a second on average: an address shared by many
 * editors (a school's, a carrier's) whose sessions expired comes nowhere near it.
 */
const UNKNOWN_SESSIONS = { hits: 60, seconds: 60 };
/**
 * Sessions not yet known that one address may have asked of the wiki at once: the window above
 * counts answers, so a burst of made-up sessions sent together would otherwise all be asked.
 */
const LOOKUPS_AT_ONCE = 8;

/** The wiki answered, and refused the credentials: a 4xx, or an error of its Action API (a 502 `upstream-error`). */
const refusedByWiki = (e: unknown) => e instanceof HttpError && (e.status < 500 || e.problemType === 'urn:problem:upstream-error');

/**
 * Callers as the wiki knows them: who a forwarded Cookie or Authorization belongs to, their
 * rights, blocks and the wiki's own rate limits for them (`meta=userinfo`, once a minute per
 * session; for anonymous callers once a minute per address), and their actions counted against
 * those limits as MediaWiki's rate limiter counts them (see rate-limits.ts).
 */
export class WikiCallers {
  private readonly known = new BoundedMap<string, { who: Promise<KnownCaller>; until: number }>(10_000);
  private readonly counts = new RateLimits();
  /** Addresses past `UNKNOWN_SESSIONS`, by wiki: until when (ms) their new sessions are refused. */
  private readonly refused = new BoundedMap<string, number>(10_000);
  /** Sessions of each address (by wiki) being asked of the wiki now. */
  private readonly asking = new Map<string, number>();

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
   * cannot be asked. `client`: the caller's address, which may bring `UNKNOWN_SESSIONS` the wiki
   * does not know in a window (429 `rate-limited` past it).
   */
  whoIs(domain: string, credentials: Credentials, client?: string): { who: Promise<KnownCaller>; until: number } {
    const anonymous = !credentials.cookie && !credentials.authorization;
    const key = anonymous ? `anonymous\u0000${domain}\u0000${credentials.forwardedFor ?? ''}` : this.keyOf(domain, credentials);
    const now = Date.now();
    const hit = this.known.get(key);
    if (hit && hit.until > now) return hit;
    const from = !anonymous && client !== undefined ? `${domain}\u0000${client}` : undefined;
    const refusedUntil = from === undefined ? undefined : this.refused.get(from);
    const busy = from !== undefined && (this.asking.get(from) ?? 0) >= LOOKUPS_AT_ONCE;
    if ((refusedUntil !== undefined && refusedUntil > now) || busy) {
      throw new HttpError(429, 'rate-limited', 'Too many sessions the wiki does not know came from this address in a short time. Log in again, or try again later.', {
        headers: { 'retry-after': String(busy ? 1 : Math.ceil((refusedUntil! - now) / 1000)) },
      });
    }
    const asked = this.wiki(domain).api.userInfo(anonymous ? { ...(credentials.forwardedFor ? { forwardedFor: credentials.forwardedFor } : {}) } : credentials).then((u): KnownCaller => ({
      user: u.anon ? null : u.name, limits: u.rateLimits ?? {}, mayEdit: (u.rights ?? []).includes('edit'), blocked: !!u.blocked,
    }));
    // A session the wiki did not take (anonymous to it, or refused with an error of its API)
    // counts against its address; a wiki that could not be reached says nothing of it.
    if (from !== undefined) {
      this.asking.set(from, (this.asking.get(from) ?? 0) + 1);
      const settled = () => {
        const left = this.asking.get(from)! - 1;
        if (left > 0) this.asking.set(from, left);
        else this.asking.delete(from);
      };
      asked.then((known) => {
        settled();
        if (known.user === null) this.unknownSession(from);
      }, (e: unknown) => {
        settled();
        if (refusedByWiki(e)) this.unknownSession(from);
      });
    }
    const who = anonymous ? asked.catch((): KnownCaller => ({ user: null, limits: MEDIAWIKI_ANON_LIMITS, mayEdit: true, blocked: false })) : asked;
    this.known.set(key, { who, until: now + KNOWN_MS });
    who.catch(() => this.known.delete(key));
    return { who, until: now + KNOWN_MS };
  }

  /** One more session from `client` the wiki did not know; past `UNKNOWN_SESSIONS`, its new ones are refused for a while. */
  private unknownSession(from: string): void {
    const wait = this.counts.take('unknown-sessions', [[`ip:${from}`, UNKNOWN_SESSIONS]]);
    if (wait !== undefined) this.refused.set(from, Date.now() + wait * 1000);
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
    this.count(domain, action, await this.whoIs(domain, credentials, client).who, client);
  }
}
