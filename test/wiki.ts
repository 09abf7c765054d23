import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import net from 'node:net';
import { after, before } from 'node:test';
import type { Config, WikiConfig } from '../src/config.js';
import { admin, processConfig, request, sleep, startProcess, startServer, tempDir, type TestServer } from './helpers.js';

/** The real wiki the test command started (scripts/wiki.sh). */
export const WIKI_URL = process.env.WIKISTORE_TEST_WIKI_URL ?? 'http://127.0.0.1:8089';

/** A revision's wikitext straight from the wiki's Parsoid, as its content type and bytes. */
export async function parsoidWikitext(title: string, rev: number): Promise<{ type: string | null; body: Buffer }> {
  const res = await fetch(`${WIKI_URL}/rest.php/${new URL(WIKI_URL).hostname}/v3/page/wikitext/${encodeURIComponent(title)}/${rev}`);
  assert.equal(res.status, 200, `Parsoid's wikitext of ${title} ${rev}`);
  return { type: res.headers.get('content-type'), body: Buffer.from(await res.arrayBuffer()) };
}

/** The test wiki's users with bot passwords (scripts/wiki.sh). */
type WikiUserName = 'Botuser' | 'Reviewer' | 'Blockeduser';
const BOT_PASSWORDS: Record<WikiUserName, string> = {
  Botuser: 'restbasebotpassword0123456789abc',
  Reviewer: 'reviewerbotpassword0123456789abc',
  Blockeduser: 'blockedbotpassword0123456789abcd',
};

/** A session on the real wiki's Action API: bot login, then edits, moves, deletions, revision deletions. */
export class WikiAdmin {
  private cookies = new Map<string, string>();
  private csrf = '+\\';

  constructor(private readonly base = WIKI_URL) {}

  private user: WikiUserName = 'Botuser';

  /** A call; a write whose session the wiki lost meanwhile (`badtoken`) logs in again and is sent once more. */
  private async call(params: Record<string, string>, post = false): Promise<any> {
    try {
      return await this.callOnce(params, post);
    } catch (e) {
      if (!(params.token && params.token === this.csrf && /: badtoken:/.test((e as Error).message))) throw e;
      await this.login(this.user);
      return this.callOnce({ ...params, token: this.csrf }, post);
    }
  }

  private async callOnce(params: Record<string, string>, post = false): Promise<any> {
    const body = new URLSearchParams({ format: 'json', formatversion: '2', ...params });
    const headers: Record<string, string> = { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
    const res = post
      ? await fetch(`${this.base}/api.php`, { method: 'POST', headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, body })
      : await fetch(`${this.base}/api.php?${body}`, { headers });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, i), pair!.slice(i + 1));
    }
    const json: any = await res.json();
    if (json.error) throw new Error(`${params.action}: ${json.error.code}: ${json.error.info}`);
    return json;
  }

  /** Logs in as the bot (an admin), or as `user` (scripts/wiki.sh makes Reviewer, a plain editor, and Blockeduser, blocked from editing). */
  async login(user: WikiUserName = 'Botuser'): Promise<this> {
    this.user = user;
    const password = BOT_PASSWORDS[user];
    const token = (await this.call({ action: 'query', meta: 'tokens', type: 'login' })).query.tokens.logintoken;
    const login = await this.call({ action: 'login', lgname: `${user}@restbase`, lgpassword: password, lgtoken: token }, true);
    if (login.login.result !== 'Success') throw new Error(`bot login failed: ${JSON.stringify(login)}`);
    this.csrf = (await this.call({ action: 'query', meta: 'tokens' })).query.tokens.csrftoken;
    return this;
  }

  async edit(title: string, text: string, summary = 'test edit'): Promise<number> {
    const res = await this.call({ action: 'edit', title, text, summary, token: this.csrf }, true);
    return res.edit.newrevid as number;
  }

  async delete(title: string): Promise<void> {
    await this.call({ action: 'delete', title, reason: 'test', token: this.csrf }, true);
  }

  async undelete(title: string): Promise<void> {
    await this.call({ action: 'undelete', title, reason: 'test', token: this.csrf }, true);
  }

  /** Moves a page, leaving a redirect behind unless `noredirect`. */
  async move(from: string, to: string, options: { noredirect?: boolean } = {}): Promise<void> {
    await this.call({ action: 'move', from, to, reason: 'test', movetalk: '1', ...(options.noredirect ? { noredirect: '1' } : {}), token: this.csrf }, true);
  }

  async hideRevision(title: string, revid: number): Promise<void> {
    await this.call({ action: 'revisiondelete', type: 'revision', target: title, ids: String(revid), hide: 'content', token: this.csrf }, true);
  }

  /** Any Action API call in this session (POST for writes). */
  api(params: Record<string, string>, post = false): Promise<any> {
    return this.call(params, post);
  }

  /** The session's CSRF token, as a client of the service sends it with a cookie save. */
  csrfToken(): string {
    return this.csrf;
  }

  /** The session's cookies, as a client of the service forwards them. */
  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async protect(title: string): Promise<void> {
    await this.call({ action: 'protect', title, protections: 'edit=sysop', expiry: 'infinite', reason: 'test', token: this.csrf }, true);
  }

  /** The page's revisions, newest first: id, user and comment. */
  async history(title: string, limit = 50): Promise<{ revid: number; user: string; comment: string }[]> {
    const res = await this.call({ action: 'query', prop: 'revisions', titles: title, rvprop: 'ids|user|comment', rvlimit: String(limit) });
    return (res.query.pages[0].revisions ?? []) as { revid: number; user: string; comment: string }[];
  }

  /** The wikitext of one revision. */
  async wikitext(revid: number): Promise<string> {
    const res = await this.call({ action: 'query', prop: 'revisions', revids: String(revid), rvprop: 'content', rvslots: 'main' });
    return res.query.pages[0].revisions[0].slots.main.content as string;
  }

  /** One section's wikitext of a revision, as the wiki cuts it. */
  async sectionWikitext(revid: number, section: number): Promise<string> {
    const res = await this.call({ action: 'query', prop: 'revisions', revids: String(revid), rvprop: 'content', rvslots: 'main', rvsection: String(section) });
    return res.query.pages[0].revisions[0].slots.main.content as string;
  }

  async latestRevid(title: string): Promise<number> {
    const res = await this.call({ action: 'query', prop: 'info', titles: title });
    return res.query.pages[0].lastrevid as number;
  }
}

/** A TCP relay in front of the wiki that can be switched off, to play "the wiki is down". */
export class SwitchableProxy {
  private server = net.createServer((client) => {
    if (this.blackHoled) {
      // Accepts and never answers, as a host whose packets are dropped after the handshake.
      this.sockets.add(client);
      client.on('error', () => undefined);
      client.on('close', () => this.sockets.delete(client));
      return;
    }
    if (!this.up) return client.destroy();
    const upstream = net.connect(this.target.port, this.target.host);
    client.pipe(upstream).pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close);
    upstream.on('error', close);
    // A cut client takes its wiki connection with it (a pipe does not end on destroy).
    upstream.on('close', close);
    this.sockets.add(client);
    client.on('close', () => {
      this.sockets.delete(client);
      close();
    });
  });
  private sockets = new Set<net.Socket>();
  up = true;
  blackHoled = false;
  port = 0;
  private readonly target: { host: string; port: number };

  constructor(url = WIKI_URL) {
    const u = new URL(url);
    this.target = { host: u.hostname, port: Number(u.port || 80) };
  }

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as net.AddressInfo).port;
    return this;
  }

  /** Cuts open connections; new ones are accepted and never answered (until `restore`). */
  blackHole(): void {
    this.blackHoled = true;
    for (const s of this.sockets) s.destroy();
  }

  /** Passes connections to the wiki again. */
  restore(): void {
    this.blackHoled = false;
    this.up = true;
    for (const s of this.sockets) s.destroy();
  }

  /** Refuses new connections and cuts open ones. */
  down(): void {
    this.up = false;
    for (const s of this.sockets) s.destroy();
  }

  async stop(): Promise<void> {
    this.down();
    await new Promise((r) => this.server.close(r));
  }
}


/** The service in front of the real wiki (through a relay that can play "the wiki is down"), and a bot session on the wiki. */
export interface AgainstWiki {
  s: TestServer;
  proxy: SwitchableProxy;
  wiki: WikiAdmin;
  /** `${s.base}/wiki.test/v1` */
  v1: string;
  /** Requests the service made to the wiki so far (of one endpoint, or all). */
  wikiRequests(endpoint?: string): number;
  close(): Promise<void>;
}

export async function startAgainstWiki(overrides: Partial<Config> = {}, wikiOverrides: Partial<WikiConfig> = {}): Promise<AgainstWiki> {
  const proxy = await new SwitchableProxy().start();
  const wikiUrl = `http://127.0.0.1:${proxy.port}`;
  let s: TestServer;
  try {
    s = await startServer({
      wikis: { 'wiki.test': { action_api: `${wikiUrl}/api.php`, rest_api: `${wikiUrl}/rest.php`, ...wikiOverrides } },
      latest_check_interval: 3600,
      ...overrides,
    });
  } catch (e) {
    // A service that cannot start (its backend down) leaves no relay listening to keep the test process alive.
    await proxy.stop();
    throw e;
  }
  const wiki = await new WikiAdmin().login();
  const wikiRequests = (endpoint?: string) => {
    const metric = (s.app.metrics.wikiRequests as unknown as { hashMap: Record<string, { value: number; labels: Record<string, string> }> }).hashMap;
    return Object.values(metric)
      .filter((m) => m.labels.domain === 'wiki.test' && (endpoint === undefined || m.labels.endpoint === endpoint))
      .reduce((n, m) => n + m.value, 0);
  };
  return {
    s, proxy, wiki, v1: `${s.base}/wiki.test/v1`, wikiRequests,
    async close() {
      await s.close();
      await proxy.stop();
    },
  };
}

/** The revision and render tid of an ETag "{revid}/{tid}". */
export function etagOf(res: { headers: Record<string, unknown> }): { rev: number; tid: string } {
  // A cache that decompresses (Varnish, for clients without gzip) weakens the ETag.
  const m = /^(?:W\/)?"(\d+)\/([0-9a-f-]{36})"$/.exec(String(res.headers.etag));
  assert.ok(m, `ETag ${res.headers.etag}`);
  return { rev: Number(m[1]), tid: m[2]! };
}

/** Settings that make the follower quick in tests: a short poll and a lease of two seconds. */
export const FAST_FOLLOWER: Pick<Config, 'follow_changes' | 'follower'> = {
  follow_changes: true,
  follower: { poll_interval: 0.2, batch_size: 100, concurrency: 4, pages_per_second: 50, dependents_per_second: 20, lease: 2, farm_polls_per_second: 20 },
};

/** Polls `check` until it returns a value, or fails after `ms`. */
export async function waitFor<T>(what: string, ms: number, check: () => Promise<T | undefined>): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(100);
  }
}

/** The page state the service has stored for a title (admin read of its own table). */
export async function storedPage(base: string, title: string): Promise<{ latest_rev: number | null; latest_tid: string | null; deleted: string | null } | undefined> {
  const res = await request(`${base}/wiki.test/sys/table/page_revisions/_query`, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: { attributes: { title }, limit: 1 } });
  assert.equal(res.status, 200, res.text);
  return res.json.items[0];
}


/**
 * For tests that kill a service process mid-transaction: a surviving process on the same store and
 * wiki (started before the tests of the enclosing describe, stopped after), the config of a
 * process told where to die, and a bot session on the wiki.
 */
export function crashTestProcesses(domain: string): { config: (kill?: string) => Record<string, string>; base: () => string; wiki: () => WikiAdmin } {
  const dir = tempDir();
  const config = (kill?: string) => processConfig(dir, domain, WIKI_URL, 'latest_check_interval: 3600\n' + (kill ? `fault_injection:\n  transaction_kill: ${kill}\n` : ''));
  let survivor: { child: ChildProcess; port: Promise<number> } | undefined;
  let base = '';
  let wiki: WikiAdmin | undefined;
  before(async () => {
    survivor = startProcess(config());
    base = `http://127.0.0.1:${await survivor.port}`;
    wiki = await new WikiAdmin().login();
  });
  after(() => {
    survivor?.child.kill('SIGTERM');
  });
  return { config, base: () => base, wiki: () => wiki! };
}
