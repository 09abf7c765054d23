import { LRUCache } from 'lru-cache';
import { HttpError, notFound } from '../util/errors.js';
import { atMostEntries } from '../util/bounded-map.js';
import type { FarmConfig } from '../config.js';
import type { Wiki } from './wiki.js';
import type { WikiConfig } from '../config.js';
import { groupHomes, WikiEntries } from './wiki-entries.js';
import { DomainList } from './domain-list.js';
import type { Logger } from 'pino';

/**
 * The wikis the service serves, by domain: the one way the code below the app finds a wiki, one
 * listed in the config by name or one of a farm's, found by pattern.
 */
export interface WikiDirectory {
  /** The wiki of a served domain (made on first use, released when not used for long); a 404 for another. */
  of(domain: string): Wiki;
  /** The domains listed by name. */
  domains(): string[];
  /** Whether `domain` is listed or matches a pattern (asks nothing of anyone). */
  serves(domain: string): boolean;
  /**
   * Before a farm's wiki is first served: undefined for a wiki known to answer; else a promise
   * that resolves once it was found to be a MediaWiki, or rejects (404 `no-such-wiki`, 503).
   */
  admit(domain: string): Promise<void> | undefined;
  /** The storage group `domain`'s rows live in; undefined: tables of its own. */
  groupOf(domain: string): string | undefined;
  /** What metrics call the wiki: its domain when listed by name, its pattern when found by one (bounded). */
  labelOf(domain: string): string;
  /** Whether `domain` was found by a pattern. */
  isFarmed(domain: string): boolean;
  /** For a farm's wiki, the domain its group's own rows are kept under (its lease, its list of wikis); also for that domain itself. */
  homeOf(domain: string): string | undefined;
  /** Runs `listener` on every wiki made from now on (a released one is made again when next used). */
  onMade(listener: (wiki: Wiki) => void): void;
}

export type MakeWiki = (domain: string, config: WikiConfig, label: string) => Wiki;

/** How long a wiki that could not be reached is not asked again (a refusal is remembered `no_such_wiki_seconds`). */
const UNREACHABLE_MS = 10_000;
/** Domains remembered as serving no wiki: whatever a client sends, this many at most. */
const REFUSALS_KEPT = 100_000;

/**
 * The wikis of the config: those listed by name, made at start; those of a pattern, found on
 * first use. A domain a pattern matches is served once its site info says it is a MediaWiki (one
 * request; after that, the site info stored is enough). A domain that is not is a 404 remembered
 * for a while, and domains never seen are looked up at most `discoveries_per_second`: a client
 * sending random subdomains grows neither memory nor the farm's load.
 */
export class ConfiguredWikis implements WikiDirectory {
  private readonly entries: WikiEntries;
  private readonly listed = new Map<string, Wiki>();
  private readonly farmed: LRUCache<string, Wiki>;
  private readonly known = new Set<string>();
  private readonly refused: LRUCache<string, HttpError>;
  private readonly finding = new Map<string, Promise<void>>();
  private readonly listeners: ((wiki: Wiki) => void)[] = [];
  private tokens: number;
  private refilledAt = Date.now();
  /** The farms' lists of their wikis, by pattern, where the config names one. */
  private readonly lists = new Map<string, DomainList>();
  /** The domains each group's own rows are kept under: served to internal requests only. */
  private readonly homes: Set<string>;

  constructor(wikis: Record<string, WikiConfig>, private readonly make: MakeWiki, private readonly farm: FarmConfig, log?: Logger) {
    this.entries = new WikiEntries(wikis);
    this.homes = new Set(groupHomes(wikis));
    for (const [key, config] of Object.entries(wikis)) if (config.domains_file) this.lists.set(key, new DomainList(config.domains_file, log));
    for (const domain of this.entries.listed()) this.listed.set(domain, make(domain, this.entries.configOf(domain)!, domain));
    this.farmed = new LRUCache({ ...atMostEntries(farm.wikis_in_memory) });
    this.refused = new LRUCache({ ...atMostEntries(REFUSALS_KEPT), ttlAutopurge: false });
    this.tokens = this.burst;
  }

  private get burst(): number {
    return Math.max(1, Math.ceil(this.farm.discoveries_per_second));
  }

  of(domain: string): Wiki {
    const listed = this.listed.get(domain);
    if (listed) return listed;
    let wiki = this.farmed.get(domain);
    if (wiki) return wiki;
    const found = this.entries.match(domain);
    if (!found) throw notFound(`Domain '${domain}' is not served here.`, 'unknown-domain');
    wiki = this.make(domain, this.entries.configOf(domain)!, found.entry.key);
    this.farmed.set(domain, wiki);
    for (const listener of this.listeners) listener(wiki);
    return wiki;
  }

  domains(): string[] {
    return [...this.listed.keys()];
  }

  /** A farm that lists its wikis serves those listed now (a name taken off the list is served no more). */
  serves(domain: string): boolean {
    if (this.listed.has(domain) || this.homes.has(domain)) return true;
    const found = this.entries.match(domain);
    return found !== undefined && this.lists.get(found.entry.key)?.has(domain) !== false;
  }

  isFarmed(domain: string): boolean {
    return !this.listed.has(domain) && this.entries.match(domain) !== undefined;
  }

  groupOf(domain: string): string | undefined {
    return this.entries.match(domain)?.entry.group;
  }

  homeOf(domain: string): string | undefined {
    if (this.listed.has(domain)) return undefined;
    const group = this.groupOf(domain);
    return group === undefined ? undefined : this.entries.homeOfGroup(group);
  }

  labelOf(domain: string): string {
    return this.listed.has(domain) ? domain : (this.entries.match(domain)?.entry.key ?? 'unknown');
  }

  /** Stops reading the farms' lists again. */
  close(): void {
    for (const list of this.lists.values()) list.close();
  }

  onMade(listener: (wiki: Wiki) => void): void {
    this.listeners.push(listener);
    for (const wiki of [...this.listed.values(), ...this.farmed.values()]) listener(wiki);
  }

  /**
   * Each pattern's wikis as health reports them: how many were found and are in memory, and the
   * worst of them (those whose circuit is open, a few named), never a line per wiki.
   */
  farms(): Record<string, { wikis_found: number; wikis_in_memory: number; circuits_open: number; worst: string[] }> {
    const farms: ReturnType<ConfiguredWikis['farms']> = {};
    const of = (key: string) => (farms[key] ??= { wikis_found: 0, wikis_in_memory: 0, circuits_open: 0, worst: [] });
    for (const domain of this.known) of(this.labelOf(domain)).wikis_found++;
    for (const [domain, wiki] of this.farmed.entries()) {
      const farm = of(this.labelOf(domain));
      farm.wikis_in_memory++;
      if (!wiki.circuit.isOpen) continue;
      farm.circuits_open++;
      if (farm.worst.length < 5) farm.worst.push(domain);
    }
    return farms;
  }

  admit(domain: string): Promise<void> | undefined {
    if (this.listed.has(domain) || this.known.has(domain)) return undefined;
    // A group's home is no wiki: no client is served by it, and no one is asked about it.
    if (this.homes.has(domain)) return Promise.reject(notFound(`Domain '${domain}' is not served here.`, 'unknown-domain'));
    const refusal = this.refused.get(domain);
    if (refusal) return Promise.reject(refusal);
    let finding = this.finding.get(domain);
    if (!finding) {
      if (!this.serves(domain)) return Promise.reject(notFound(`Domain '${domain}' is not served here.`, 'unknown-domain'));
      if (!this.take()) {
        return Promise.reject(new HttpError(503, 'discovery-limited', 'Too many wikis never seen before were asked for at once; try again shortly.', { headers: { 'retry-after': '1' } }));
      }
      finding = this.find(domain).finally(() => this.finding.delete(domain));
      this.finding.set(domain, finding);
    }
    return finding;
  }

  /** The host a farm's wiki is asked at, when its pattern puts the name asked for in the host; else undefined. */
  private hostAsked(domain: string): string | undefined {
    const template = this.entries.match(domain)?.entry.config.action_api ?? '';
    if (!/^[a-z]+:\/\/[^/]*\{(domain|label)\}/i.test(template)) return undefined;
    return new URL(this.entries.configOf(domain)!.action_api).hostname.toLowerCase();
  }

  /** A token of the discovery rate, if one is left (refilled continuously, up to one second's worth). */
  private take(): boolean {
    const now = Date.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.refilledAt) / 1000) * this.farm.discoveries_per_second);
    this.refilledAt = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Asks the wiki's site info (stored, or of the wiki): a MediaWiki is served from now on. */
  private async find(domain: string): Promise<void> {
    try {
      const info = await this.of(domain).siteInfo();
      if (!String(info.general?.generator ?? '').startsWith('MediaWiki')) throw new Error('not a MediaWiki');
      // A farm chosen by host name: the wiki must say it is that host, or a catch-all wiki
      // answering every name would make each random name a wiki of its own.
      const asked = this.hostAsked(domain);
      if (asked !== undefined && servedHost(info) !== asked) throw new Error(`the wiki says it is ${servedHost(info)}, not ${asked}`);
      this.known.add(domain);
    } catch (err) {
      const unreachable = err instanceof HttpError && (err.status === 503 || err.status === 504 || /answered 5\d\d/.test(err.message));
      const refusal = unreachable
        ? new HttpError(503, 'upstream-unavailable', `The wiki of '${domain}' cannot be reached; try again shortly.`, { headers: { 'retry-after': String(UNREACHABLE_MS / 1000) } })
        : notFound(`No wiki answers at '${domain}'.`, 'no-such-wiki');
      this.refused.set(domain, refusal, { ttl: unreachable ? UNREACHABLE_MS : this.farm.no_such_wiki_seconds * 1000 });
      // Its state goes: a domain that is no wiki keeps nothing but its refusal.
      this.farmed.delete(domain);
      throw refusal;
    }
  }
}

/** The host a wiki says it is served at (its site info's servername, else its server's host). */
function servedHost(info: { general?: Record<string, unknown> }): string {
  const name = info.general?.servername;
  if (typeof name === 'string' && name) return name.toLowerCase();
  try {
    return new URL(String(info.general?.server ?? ''), 'http://invalid').hostname.toLowerCase();
  } catch {
    return '';
  }
}
