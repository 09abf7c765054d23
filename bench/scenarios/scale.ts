import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import Database from 'better-sqlite3';
import cassandra from 'cassandra-driver';
import mysql from 'mysql2/promise';
import postgres from 'postgres';
import type { StorageConfig } from '../../src/config.js';
import { openStorage } from '../../src/storage/index.js';
import type { TableStorage } from '../../src/storage/table-storage.js';
import { newTid } from '../../src/util/tid.js';
import { BODY_FORMAT, packBody, packPlainBody } from '../../src/modules/page/snapshot/record-format.js';
import type { PackedBody } from '../../src/modules/page/tables/snapshot-bodies.js';
import type { PageFacts } from '../../src/upstream/page-facts.js';
import { load, median, medianSample, rssMb, type Sample } from '../harness.js';
import { DOMAIN, startBareRows, startService } from '../service.js';

/** One backend the store is grown on. */
export interface ScaleBackend {
  name: 'sqlite' | 'postgres' | 'mariadb' | 'cassandra';
  /** PostgreSQL's URL (a database of its own); SQLite gets a file in a fresh directory. */
  pgUrl?: string;
  /** MariaDB's URL (a database of its own). */
  mariadbUrl?: string;
  /** Cassandra's nodes (every one of them: their data directories are measured on this machine). */
  cassandraHosts?: string[];
}

/** Keyspaces of the scale run on Cassandra (dropped before it starts). */
const CASSANDRA_PREFIX = 'scale';
/** Where `scripts/cassandra.sh` keeps its nodes' data. */
const CASSANDRA_ROOT = process.env.CASSANDRA_ROOT ?? path.resolve('.cassandra');

function cassandraStorage(hosts: string[]): StorageConfig {
  return {
    backend: 'cassandra', contact_points: hosts, local_data_center: 'datacenter1', keyspace_prefix: CASSANDRA_PREFIX,
    replication: { datacenter1: Math.min(3, hosts.length) }, consistency: { read: 'local_quorum', write: 'local_quorum', serial: 'serial' },
  };
}

const cassandraYaml = (hosts: string[]) =>
  `  backend: cassandra\n  contact_points: ${JSON.stringify(hosts)}\n  local_data_center: datacenter1\n  keyspace_prefix: ${CASSANDRA_PREFIX}\n  replication: { datacenter1: ${Math.min(3, hosts.length)} }`;

async function withCassandra<T>(hosts: string[], work: (client: cassandra.Client) => Promise<T>): Promise<T> {
  const client = new cassandra.Client({ contactPoints: hosts, localDataCenter: 'datacenter1' });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.shutdown();
  }
}

/** A fresh start: the keyspaces an earlier scale run left are dropped. */
async function dropScaleKeyspaces(hosts: string[]): Promise<void> {
  await withCassandra(hosts, async (client) => {
    const { rows } = await client.execute('SELECT keyspace_name FROM system_schema.keyspaces');
    for (const { keyspace_name: name } of rows) if (String(name).startsWith(`${CASSANDRA_PREFIX}_`)) await client.execute(`DROP KEYSPACE IF EXISTS "${name}"`);
  });
}

/** What was measured at one size. */
export interface ScaleRow {
  backend: string;
  renders: number;
  pages: number;
  fillRendersPerSecond: number;
  bareInsertsPerSecond: number;
  bytesPerRender: number;
  gzippedPartsPerRender: number;
  /** The median of `TIMINGS` start-ups on the same store. */
  startupMs: number;
  rssMb: number;
  reads: Record<string, Sample>;
  /** By revid and by tid, the bare server reading the same row with the engine's driver (SQLite, PostgreSQL). */
  bareReads: Record<string, Sample>;
  /** The same, reading the revision's row too (whether its text is hidden, which render is current). */
  bareWithRevisionReads: Record<string, Sample>;
  /**
   * Per read, of the service's requests in its rounds: the share that read the render's row from
   * storage, and the revision's (the rest were answered from the caches in memory). What "a read
   * that misses every cache" measures is only as true as these.
   */
  storageReadsPerRequest: Record<string, { renders: number; revisions: number; renderCacheMisses: number }>;
  /** Reads by revision id of renders the service never read before (SQLite, PostgreSQL). */
  firstReads?: FirstReads;
  /** ms of one request at the first, a middle and the last page of each listing. */
  listing: { first: number; middle: number; last: number; pages: number };
  history: { first: number; middle: number; last: number; pages: number; revisions: number };
  /** ms of one read by tid of a render of that page: its newest, one halfway down and its oldest (medians over five renders each). */
  historyByTid: { newest: number; middle: number; oldest: number };
  /** Medians of `TIMINGS` sweeps each. */
  ttlSweepMs: number;
  /** PostgreSQL: the VACUUM (ANALYZE) run after the fill, before anything is measured (ms). */
  vacuumMs?: number;
  transactionSweepMs: number;
  wikiRequestsDuringReads: number;
  /** A snapshot of the store from storage alone, and the same pages' rows read through the table API alone. */
  snapshot: SnapshotRun;
  bodyOnRender: BodyOnRender;
}

export interface SnapshotRun {
  pages: number;
  pagesPerSecond: number;
  mbPerSecond: number;
  peakRssMb: number;
  /** Of it, the process's own memory (not the store's mapped pages). */
  peakAnonMb: number;
  /** The run's fixed costs: before its first page was written (titles listed, archive opened), after its last (archive finished, manifest). */
  beforeFirstPageMs: number;
  afterLastPageMs: number;
  tablePagesPerSecond: number;
  /** The same snapshot and table read again in the same process, each with its code compiled and the store's pages in memory. */
  again?: { pagesPerSecond: number; tablePagesPerSecond: number };
  /** Pages whose body the snapshot copied as stored, and those it made from their renders. */
  bodies: { stored: number; made: number };
  /** The same snapshot once the pages' facts are dropped (records as the previous release wrote them), median of three. */
  withoutFactsPagesPerSecond?: number;
  /**
   * The same snapshot of the store without its bodies (renders made with `snapshot_bodies:
   * snapshot`): every page's body made from its render (on worker threads, one per core) and stored.
   */
  withoutBodies: { pagesPerSecond: number; mbPerSecond: number; peakRssMb: number; peakAnonMb: number; bodies: { stored: number; made: number } };
}

/** What a page's latest render costs the service to make its snapshot body as it is stored (bodies-on-render.ts). */
export interface BodyOnRender {
  /** Mean over the corpus renders, ms (the 2.x HTML and escaping on the main thread, the deflate on the thread pool). */
  ms: number;
  /** The body's compressed size against the render's four compressed parts (means, KB). */
  bodyKb: number;
  renderKb: number;
}

interface Parts {
  html: Buffer;
  data_parsoid: Buffer;
  data_mw: Buffer;
  wikitext: Buffer;
  types: Record<string, string>;
}

/** The long history read page by page: this many revisions (a quarter of the smallest store at most), each with its render. */
const LONG_HISTORY = 5000;
const LONG_HISTORY_TITLE = 'Scale_long_history';
/** Pages read at every size: the same number, spread evenly over the store as it is then. */
const READ_KEYS = 500;
/**
 * Renders read by revision and by tid at every size, spread likewise: more than the service's
 * render cache holds (32 MB, some 2,000 of these), so most reads are the store's.
 */
const READ_RENDERS = 5000;
/** The reads measured beside a bare server reading the same row (bench/bare-row-server.ts). */
const BARE_READS = ['by revid', 'by tid'];

/** `count` items of `all`, evenly spaced (all of them if there are fewer). */
function spread<T>(all: T[], count: number): T[] {
  const n = Math.min(count, all.length);
  return Array.from({ length: n }, (_, i) => all[Math.floor((i * all.length) / n)]!);
}
const READ_ROUNDS = 3;
/**
 * Start-ups and sweeps are timed this many times at each size, and the median kept: one sample of
 * a shared two-core machine told a 4.6 ms sweep from a 22 ms one, or a start-up of 2.5 s from 1.5.
 */
const TIMINGS = 5;

/** The median of `TIMINGS` runs of `time` (each gives its own measure, in ms). */
async function medianTiming(time: (run: number) => Promise<number>): Promise<number> {
  const timings: number[] = [];
  for (let run = 0; run < TIMINGS; run++) timings.push(await time(run));
  return median(timings);
}


const rawGet = (url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> =>
  new Promise((resolve, reject) => {
    http.get(url, { headers: { 'accept-encoding': 'gzip', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });

/** A page's Enterprise facts of the size a typical article's are (bench/README.md: the complete records). */
function factsOf(title: string, rev: number, parent: number | undefined, timestamp: string): PageFacts {
  return {
    rev, latest: rev, asked: timestamp,
    categories: Array.from({ length: 12 }, (_, i) => ({ name: `Category:Scale category ${i} of ${title.slice(0, 20)}`, hidden: i === 0 })),
    templates: Array.from({ length: 40 }, (_, i) => `Template:Scale template ${i}`),
    redirects: Array.from({ length: 3 }, (_, i) => `${title}_redirect_${i}`),
    protection: [{ type: 'edit', level: 'autoconfirmed', expiry: 'infinity' }],
    description: `The scale page ${title.slice(0, 30)}`,
    image: { name: 'Scale.jpg', url: 'https://upload.example/Scale.jpg', width: 800, height: 600 },
    editor: { editCount: 1234, groups: ['*', 'user', 'autoconfirmed'], rights: ['read', 'edit'], registration: '2010-01-01T00:00:00Z' },
    ...(parent ? { previous: { timestamp, characters: 4000 } } : {}),
    created: '2020-01-01T00:00:00Z',
  };
}

/** Real renders: the wiki's Parsoid output for the corpus pages, fetched once through a service and kept as stored (gzipped). */
async function corpusRenders(wikiUrl: string): Promise<Parts[]> {
  const titles: string[] = [];
  const list = (await (await fetch(`${wikiUrl}/api.php?action=query&list=allpages&aplimit=100&apnamespace=0&format=json&formatversion=2`)).json()) as { query: { allpages: { title: string }[] } };
  for (const p of list.query.allpages) titles.push(p.title.replace(/ /g, '_'));
  const service = await startService('sqlite', wikiUrl);
  try {
    const parts: Parts[] = [];
    for (const title of titles.slice(0, 40)) {
      const got: Record<string, Buffer> = {};
      const types: Record<string, string> = {};
      for (const prop of ['html', 'data-parsoid', 'data-mw', 'wikitext']) {
        const res = await rawGet(`${service.base}/${DOMAIN}/v1/page/${encodeURIComponent(title)}/${prop}`);
        if (res.status !== 200 || res.headers['content-encoding'] !== 'gzip') break;
        got[prop] = res.body;
        types[prop] = String(res.headers['content-type']);
      }
      if (Object.keys(got).length === 4) parts.push({ html: got.html!, data_parsoid: got['data-parsoid']!, data_mw: got['data-mw']!, wikitext: got.wikitext!, types });
    }
    if (parts.length === 0) throw new Error('no render could be read from the wiki');
    return parts;
  } finally {
    await service.stop();
  }
}

/** The service's cost of a latest render's snapshot body, made from its parts as they came (bodies-on-render.ts). */
async function bodyOnRenderCost(parts: Parts[]): Promise<BodyOnRender> {
  const times: number[] = [];
  for (let round = 0; round < 3; round++) {
    for (const p of parts) {
      const plain = { html: zlib.gunzipSync(p.html), dataMw: zlib.gunzipSync(p.data_mw), wikitext: zlib.gunzipSync(p.wikitext) };
      const t0 = performance.now();
      await packPlainBody(plain);
      // The first round warms the code up.
      if (round > 0) times.push(performance.now() - t0);
    }
  }
  const kb = (n: number) => n / 1024;
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  // Means: the store draws its renders from these evenly, and what it pays is their sum.
  return {
    ms: mean(times),
    bodyKb: mean(parts.map((p) => kb(packBody({ html: p.html, dataMw: p.data_mw, wikitext: p.wikitext }).gz.length))),
    renderKb: mean(parts.map((p) => kb(p.html.length + p.data_parsoid.length + p.data_mw.length + p.wikitext.length))),
  };
}

/** Page i's number of revisions: 1–20, spread evenly. */
const revisionsOf = (i: number) => 1 + ((i * 7919) % 20);

class Filler {
  pages = 0;
  renders = 0;
  /** Pages begun (numbers handed out). */
  private numbered = 0;
  /** The gzipped properties written, in bytes (what a render's storage is compared with). */
  partBytes = 0;
  private rev = 1;
  private readonly t0 = Date.UTC(2020, 0, 1);
  /** Every page that can be read (not deleted), with its visible revisions. */
  readonly readable: { title: string; revs: { rev: number; tid: string }[] }[] = [];
  /** The long history's render tids, oldest first. */
  longHistoryTids: string[] = [];

  /** Each corpus render's snapshot body, made once: the same bytes the service makes as it stores the render. */
  private readonly bodies = new Map<Parts, PackedBody>();

  constructor(private readonly storage: TableStorage, private readonly parts: Parts[]) {}

  private bodyOf(parts: Parts): PackedBody {
    let body = this.bodies.get(parts);
    if (!body) this.bodies.set(parts, (body = packBody({ html: parts.html, dataMw: parts.data_mw, wikitext: parts.wikitext })));
    return body;
  }

  /** A time at which revision `rev` was its page's current one: after it was made, before the next. */
  whenCurrent(rev: number): string {
    return new Date(this.t0 + rev * 60_000 + 30_000).toISOString();
  }

  /** Stores one page with `count` revisions, each with its render, as the service would have. */
  async page(title: string, count: number, deleted: boolean): Promise<void> {
    // Its number taken now: pages are written side by side, and the count moves meanwhile.
    const n = this.numbered++;
    const hidden = count > 2 && n % 30 === 0;
    const revs: { rev: number; tid: string; timestamp: string }[] = [];
    for (let r = 0; r < count; r++) {
      const rev = this.rev++;
      revs.push({ rev, tid: newTid(), timestamp: new Date(this.t0 + rev * 60_000).toISOString() });
    }
    const latest = revs[revs.length - 1]!;
    const now = new Date().toISOString();
    // Each revision another page's render: identical bytes side by side in a partition would let
    // an engine that compresses its files (Cassandra) store them as one, as real revisions would not.
    const variantOf = (rev: number) => this.parts[(rev * 31) % this.parts.length]!;
    const write = async (i: number) => {
      const r = revs[i]!;
      const variant = variantOf(r.rev);
      await this.storage.put(DOMAIN, {
        table: 'parsoid',
        attributes: {
          title, rev: r.rev, tid: r.tid, html: variant.html, data_parsoid: variant.data_parsoid, data_mw: variant.data_mw, wikitext: variant.wikitext,
          meta: { types: variant.types, digest: `d${r.rev}` },
        },
      });
      await this.storage.put(DOMAIN, {
        table: 'page_revisions',
        attributes: {
          title, rev: r.rev, tid: r.tid, page_id: n + 1, timestamp: r.timestamp, user_id: 1, user_text: 'Scale', comment: `revision ${r.rev}`,
          minor: false, size: variant.wikitext.length, content_model: 'wikitext', text_hidden: hidden && i === 0,
          user_hidden: false, comment_hidden: false, seen: now, parent_id: i > 0 ? revs[i - 1]!.rev : 0, tags: [],
          ...(i === count - 1 ? { latest_rev: latest.rev, latest_tid: latest.tid, checked: now, first_seen: now, deleted: deleted ? now : null } : {}),
        },
      });
    };
    // A page's revisions in order (the statics with the last), pages side by side.
    for (let i = 0; i < count; i++) await write(i);
    // Its latest render's snapshot body, made as the service stores that render (snapshot_bodies: render).
    const body = this.bodyOf(variantOf(latest.rev));
    await this.storage.put(DOMAIN, {
      table: 'snapshot_bodies',
      attributes: { title, rev: latest.rev, tid: latest.tid, format: BODY_FORMAT, body: body.gz, bytes: body.bytes, wikitext_bytes: body.wikitextBytes, render: body.render },
    });
    // And its page's Enterprise facts, as asked of the wiki when that render was stored: the lists
    // of a typical article (a dozen categories, 40 templates, a few redirects), its editor, its parent.
    await this.storage.put(DOMAIN, { table: 'page_facts', attributes: { title, rev: latest.rev, facts: factsOf(title, latest.rev, revs.at(-2)?.rev, latest.timestamp) } });
    for (const r of revs) {
      const variant = variantOf(r.rev);
      this.partBytes += variant.html.length + variant.data_parsoid.length + variant.data_mw.length + variant.wikitext.length;
    }
    this.pages++;
    this.renders += count;
    // Read back later: visible revisions only (a hidden one answers 403).
    if (title === LONG_HISTORY_TITLE) this.longHistoryTids = revs.map((r) => r.tid);
    if (!deleted && title !== LONG_HISTORY_TITLE) this.readable.push({ title, revs: (hidden ? revs.slice(1) : revs).map(({ rev, tid }) => ({ rev, tid })) });
  }

  /** Grows the store to `target` renders, 16 pages at a time; answers renders/s. */
  async fillTo(target: number): Promise<number> {
    const start = performance.now();
    const before = this.renders;
    while (this.renders < target) {
      const batch: Promise<void>[] = [];
      for (let k = 0; k < 16 && this.renders + batch.length * 10 < target; k++) {
        const i = this.numbered;
        batch.push(this.page(`Scale_page_${i}_${'x'.repeat(1 + (i % 40))}`, Math.min(revisionsOf(i), Math.max(1, target - this.renders)), i % 50 === 0));
      }
      if (batch.length === 0) batch.push(this.page(`Scale_page_${this.numbered}`, 1, false));
      await Promise.all(batch);
    }
    return (this.renders - before) / ((performance.now() - start) / 1000);
  }
}

/** The engine's own insert rate for rows of the same bytes (no table layer), 16 writers. */
async function bareInsertRate(backend: ScaleBackend, dir: string, parts: Parts[]): Promise<number> {
  const n = 3000;
  const row = (i: number) => { const p = parts[i % parts.length]!; return [`t${i % 500}`, i, newTid(), p.html, p.data_parsoid, p.data_mw, p.wikitext] as const; };
  if (backend.name === 'sqlite') {
    const db = new Database(path.join(dir, 'bare.sqlite3'));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec('CREATE TABLE r (title TEXT, rev INTEGER, tid TEXT, html BLOB, dp BLOB, dm BLOB, wt BLOB, PRIMARY KEY (title, rev, tid))');
    const insert = db.prepare('INSERT INTO r VALUES (?, ?, ?, ?, ?, ?, ?)');
    const start = performance.now();
    for (let i = 0; i < n; i++) insert.run(...row(i));
    const rate = n / ((performance.now() - start) / 1000);
    db.close();
    return rate;
  }
  if (backend.name === 'cassandra') {
    const hosts = backend.cassandraHosts!;
    return withCassandra(hosts, async (client) => {
      const ks = `${CASSANDRA_PREFIX}_bare`;
      await client.execute(`CREATE KEYSPACE IF NOT EXISTS ${ks} WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': ${Math.min(3, hosts.length)}}`);
      await client.execute(`CREATE TABLE IF NOT EXISTS ${ks}.r (title text, rev bigint, tid timeuuid, html blob, dp blob, dm blob, wt blob, PRIMARY KEY (title, rev, tid))`);
      const insert = `INSERT INTO ${ks}.r (title, rev, tid, html, dp, dm, wt) VALUES (?, ?, ?, ?, ?, ?, ?)`;
      const options = { prepare: true, consistency: cassandra.types.consistencies.localQuorum };
      let next = 0;
      const start = performance.now();
      await Promise.all(Array.from({ length: 16 }, async () => {
        for (let i = next++; i < n; i = next++) await client.execute(insert, [...row(i)], options);
      }));
      const rate = n / ((performance.now() - start) / 1000);
      await client.execute(`DROP KEYSPACE ${ks}`);
      return rate;
    });
  }
  if (backend.name === 'mariadb') {
    const pool = mysql.createPool({ uri: backend.mariadbUrl!, connectionLimit: 16 });
    try {
      await pool.query('DROP TABLE IF EXISTS bare_scale');
      await pool.query('CREATE TABLE bare_scale (title VARCHAR(255), rev BIGINT, tid CHAR(36), html LONGBLOB, dp LONGBLOB, dm LONGBLOB, wt LONGBLOB, PRIMARY KEY (title, rev, tid)) DEFAULT CHARSET=utf8mb4');
      let next = 0;
      const start = performance.now();
      await Promise.all(Array.from({ length: 16 }, async () => {
        for (let i = next++; i < n; i = next++) await pool.execute('INSERT INTO bare_scale VALUES (?, ?, ?, ?, ?, ?, ?)', [...row(i)]);
      }));
      const rate = n / ((performance.now() - start) / 1000);
      await pool.query('DROP TABLE bare_scale');
      return rate;
    } finally {
      await pool.end();
    }
  }
  const sql = postgres(backend.pgUrl!, { max: 16, onnotice: () => undefined });
  try {
    await sql`DROP TABLE IF EXISTS bare_scale`;
    await sql`CREATE TABLE bare_scale (title TEXT, rev BIGINT, tid UUID, html BYTEA, dp BYTEA, dm BYTEA, wt BYTEA, PRIMARY KEY (title, rev, tid))`;
    let next = 0;
    const start = performance.now();
    await Promise.all(Array.from({ length: 16 }, async () => {
      for (let i = next++; i < n; i = next++) {
        const [t, rev, tid, a, b, c, d] = row(i);
        await sql`INSERT INTO bare_scale VALUES (${t}, ${rev}, ${tid}, ${a}, ${b}, ${c}, ${d})`;
      }
    }));
    const rate = n / ((performance.now() - start) / 1000);
    await sql`DROP TABLE bare_scale`;
    return rate;
  } finally {
    await sql.end();
  }
}

/** Bytes of every file under `dir`. */
function treeBytes(dir: string): number {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    total += entry.isDirectory() ? treeBytes(full) : fs.statSync(full).size;
  }
  return total;
}

async function bytesOnDisk(backend: ScaleBackend, sqlitePath: string): Promise<number> {
  if (backend.name === 'cassandra') {
    // What the nodes hold once their memtables are flushed, per copy of the data (each row is
    // kept on as many nodes as the replication factor).
    const hosts = backend.cassandraHosts!;
    let total = 0;
    for (let n = 1; n <= hosts.length; n++) {
      execFileSync('bash', ['scripts/cassandra.sh', 'nodetool', String(n), 'flush'], { stdio: 'ignore' });
      // Compactions the fill started run on the cores the reads are measured on: let them finish.
      for (const deadline = Date.now() + 600_000; Date.now() < deadline; await sleep(5000)) {
        const stats = execFileSync('bash', ['scripts/cassandra.sh', 'nodetool', String(n), 'compactionstats'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
        if (/pending tasks\s+0\b/.test(stats)) break;
      }
      const data = path.join(CASSANDRA_ROOT, `node${n}`, 'data');
      for (const ks of fs.readdirSync(data)) if (ks.startsWith(`${CASSANDRA_PREFIX}_`)) total += treeBytes(path.join(data, ks));
    }
    return total / Math.min(3, hosts.length);
  }
  if (backend.name === 'sqlite') {
    // The database and what its write-ahead log holds that is not in it yet.
    const size = (file: string) => (fs.existsSync(file) ? fs.statSync(file).size : 0);
    return size(sqlitePath) + size(`${sqlitePath}-wal`);
  }
  if (backend.name === 'mariadb') {
    const conn = await mysql.createConnection(backend.mariadbUrl!);
    try {
      // The service's tables only, as InnoDB counts them (pages of data and of indexes).
      const [rows] = await conn.query(
        "SELECT SUM(data_length + index_length) AS bytes FROM information_schema.tables WHERE table_schema = DATABASE() AND (table_name LIKE 't\\_%' OR table_name LIKE 'wikistore\\_%')",
      );
      return Number((rows as { bytes: string }[])[0]!.bytes);
    } finally {
      await conn.end();
    }
  }
  const sql = postgres(backend.pgUrl!, { max: 1, onnotice: () => undefined });
  try {
    // The service's tables only (`t_…` and its own `wikistore_…`): a database shared with the other
    // scenarios holds their tables too (a 50 KB value per conditional write of the storage bench).
    const [row] = await sql`SELECT sum(pg_total_relation_size(c.oid))::bigint AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND (starts_with(c.relname, 't_') OR starts_with(c.relname, 'wikistore_'))`;
    return Number(row!.bytes);
  } finally {
    await sql.end();
  }
}

/**
 * What an operator runs after a bulk load, and what autovacuum would otherwise do on the cores the
 * reads are measured on (as Cassandra's compactions are waited for): the fill's rows vacuumed and
 * the planner's statistics brought up to date. Its time is reported.
 */
async function vacuumAfterFill(url: string): Promise<number> {
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    const t = performance.now();
    await sql.unsafe('VACUUM (ANALYZE)');
    return performance.now() - t;
  } finally {
    await sql.end();
  }
}

/** ms of one GET (the median of five). */
async function timed(url: string): Promise<number> {
  const ms: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    // The paging is measured, not an answer the service keeps to send again (the same request repeats).
    const res = await rawGet(url, { 'cache-control': 'no-cache' });
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${res.body.toString('utf8').slice(0, 300)}`);
    ms.push(performance.now() - t);
  }
  return median(ms);
}

/** ms of one GET of each URL, each read once (a render read is kept in memory after): the median. */
async function timedOnce(urls: string[]): Promise<number> {
  const ms: number[] = [];
  for (const url of urls) {
    const t = performance.now();
    const res = await rawGet(url, { 'accept-encoding': 'gzip' });
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${res.body.toString('utf8').slice(0, 300)}`);
    ms.push(performance.now() - t);
  }
  return median(ms);
}

/** A listing walked to its end: the first, a middle and the last page timed. */
async function walk(first: string): Promise<{ first: number; middle: number; last: number; pages: number }> {
  const urls = [first];
  for (;;) {
    const res = await rawGet(urls[urls.length - 1]!);
    const body = JSON.parse((res.headers['content-encoding'] === 'gzip' ? zlib.gunzipSync(res.body) : res.body).toString('utf8')) as { next?: string };
    const next = body.next;
    if (!next) break;
    const u = new URL(urls[0]!);
    u.searchParams.set('next', next);
    urls.push(u.toString());
  }
  return { first: await timed(urls[0]!), middle: await timed(urls[Math.floor(urls.length / 2)]!), last: await timed(urls[urls.length - 1]!), pages: urls.length };
}

const metric = async (base: string, pattern: RegExp) =>
  [...(await (await fetch(`${base}/metrics`)).text()).matchAll(pattern)].reduce((n, m) => n + Number(m[1]), 0);

/** Reads by revision id of renders the service has not read, beside the bare server reading both rows. */
export interface FirstReads {
  /** The service's rounds, each over renders no round before it read. */
  service: Sample;
  bare: Sample;
  /** The service's CPU (every thread, the collector's too) per request, in µs. */
  cpuUsPerRequest: number;
  /** Per request: the render's row read from storage, and the revision's (1 and 1 for a read that missed every cache). */
  renders: number;
  revisions: number;
}

/**
 * One first-read round: half a second, no warm-up (the service is warm from the reads before; its
 * requests must not come back to a render the round read), over renders no round before it took.
 */
const FIRST_READ_SECONDS = 0.5;
const FIRST_READ_SLICE = 2000;

/**
 * Up to three rounds, each over renders no earlier round read, alternated with the bare server
 * reading the same two rows (it keeps nothing, so its rounds may repeat).
 */
async function firstReadsOf(serviceBase: string, bareBase: string, unread: string[]): Promise<FirstReads | undefined> {
  const rounds = Math.min(3, Math.floor(unread.length / FIRST_READ_SLICE));
  if (rounds === 0) return undefined;
  const service: Sample[] = [];
  const bare: Sample[] = [];
  const counted = { requests: 0, renders: 0, revisions: 0, cpu: 0 };
  const cpu = (base: string) => metric(base, /^process_cpu_seconds_total ([\d.e-]+)/gm);
  for (let r = 0; r < rounds; r++) {
    const slice = unread.slice(r * FIRST_READ_SLICE, (r + 1) * FIRST_READ_SLICE);
    const round = (base: string) => load({ url: `${base}${slice[0]}`, paths: slice, headers: { 'accept-encoding': 'gzip' } }, FIRST_READ_SECONDS, 50, true, 0);
    const before = await readCounts(serviceBase);
    const cpuBefore = await cpu(serviceBase);
    service.push(await round(serviceBase));
    const cpuAfter = await cpu(serviceBase);
    const after = await readCounts(serviceBase);
    counted.requests += after.requests - before.requests;
    counted.renders += after.renders - before.renders;
    counted.revisions += after.revisions - before.revisions;
    counted.cpu += cpuAfter - cpuBefore;
    bare.push(await round(bareBase));
  }
  return {
    service: medianSample(service), bare: medianSample(bare), cpuUsPerRequest: (1e6 * counted.cpu) / counted.requests,
    renders: counted.renders / counted.requests, revisions: counted.revisions / counted.requests,
  };
}

/** The service's page reads so far (outside requests of the page API), and its reads of the render and revision tables. */
async function readCounts(base: string): Promise<{ requests: number; renders: number; revisions: number; renderCacheMisses: number }> {
  const text = await (await fetch(`${base}/metrics`)).text();
  // Each line's count: route labels hold braces of their own (`{domain}`), so lines are picked by their text.
  const sum = (pick: (line: string) => boolean) => text.split('\n').filter(pick).reduce((n, line) => n + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
  return {
    requests: sum((l) => l.startsWith('http_requests_total{') && l.includes('/v1/page/') && l.includes('origin="external"')),
    renders: sum((l) => l.startsWith('storage_operation_seconds_count{operation="get",table="parsoid"}')),
    revisions: sum((l) => l.startsWith('storage_operation_seconds_count{operation="get",table="page_revisions"}')),
    // The render cache's own count of its misses, beside the render table's reads it should match.
    renderCacheMisses: sum((l) => l.startsWith('render_cache_reads_total{outcome="miss"}')),
  };
}

/**
 * Grows a store to each size in turn (renders written straight through the storage layer, as a
 * running service leaves them), then starts the service on it and measures what must stay flat.
 */
/** The store's snapshot from storage alone, in a process of its own on the service's config (bench/snapshot-child.ts). */
function snapshotRun(config: string): Promise<SnapshotRun> {
  const child = path.join(path.dirname(fileURLToPath(import.meta.url)), '../snapshot-child.js');
  const at = new Date().toISOString();
  // Each in a process of its own, so that each peak RSS is its own.
  const run = (env: Record<string, string> = {}) => {
    // WIKISTORE_BENCH_SNAPSHOT_NODE_ARGS: more node flags for the snapshot (e.g. --cpu-prof).
    const flags = process.env.WIKISTORE_BENCH_SNAPSHOT_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
    // The node flags of `npm run snapshot` (package.json).
    const out = execFileSync(process.execPath, ['--max-old-space-size=256', '--max-semi-space-size=8', ...flags, child, DOMAIN, at], { env: { ...process.env, CONFIG: config, ...env }, maxBuffer: 1 << 20 });
    return JSON.parse(out.toString('utf8').trim().split('\n').pop()!) as Omit<SnapshotRun, 'withoutBodies'>;
  };
  // The store as the service leaves it (each latest render's body made as it was stored), then
  // the same store without its bodies: the snapshot makes each (and stores it again). The first,
  // a run of a second or less at 10k renders, by the median of three runs: one run's rate moved by
  // a sixth from one run to the next on this shared machine.
  const copied = [run(), run(), run()].sort((a, b) => a.pagesPerSecond - b.pagesPerSecond)[1]!;
  // Side by side, the same store's records without the pages' facts (the previous release's records;
  // the facts are gone for the run after it too), then without their bodies.
  const withoutFacts = [run({ WITHOUT_FACTS: '1' }), run(), run()].sort((a, b) => a.pagesPerSecond - b.pagesPerSecond)[1]!;
  const remade = run({ REMAKE_BODIES: '1' });
  return Promise.resolve({ ...copied, withoutFactsPagesPerSecond: withoutFacts.pagesPerSecond, withoutBodies: { pagesPerSecond: remade.pagesPerSecond, mbPerSecond: remade.mbPerSecond, peakRssMb: remade.peakRssMb, peakAnonMb: remade.peakAnonMb, bodies: remade.bodies } });
}

export async function scaleScenario(backend: ScaleBackend, sizes: number[], wikiUrl: string, seconds: number): Promise<ScaleRow[]> {
  const parts = await corpusRenders(wikiUrl);
  const bodyOnRender = await bodyOnRenderCost(parts);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wikistore-scale-'));
  const sqlitePath = path.join(dir, 'scale.sqlite3');
  const hosts = backend.cassandraHosts ?? [];
  const where = backend.name === 'sqlite' ? { path: sqlitePath }
    : backend.name === 'cassandra' ? { yaml: cassandraYaml(hosts) }
    : backend.name === 'mariadb' ? { yaml: `  backend: mariadb\n  url: ${JSON.stringify(backend.mariadbUrl)}` }
    : { url: backend.pgUrl! };
  const config: StorageConfig =
    backend.name === 'sqlite' ? { backend: 'sqlite', path: sqlitePath }
    : backend.name === 'cassandra' ? cassandraStorage(hosts)
    : backend.name === 'mariadb' ? { backend: 'mariadb', url: backend.mariadbUrl!, pool_size: 16 }
    : { backend: 'postgres', url: backend.pgUrl!, pool_size: 16 };
  if (backend.name === 'cassandra') await dropScaleKeyspaces(hosts);
  const yaml = 'latest_check_interval: 86400\nrevision_recheck_interval: 86400\ntransaction_sweep_interval: 1\n';
  // The service makes its tables once; the store is then filled beside it.
  const first = await startService(where, wikiUrl, {}, yaml);
  // A title read once stores the wiki's site info (its title rules) for the runs without the wiki.
  await rawGet(`${first.base}/${DOMAIN}/v1/page/Scale_site_info/html`);
  await first.stop();
  const storage = await openStorage(config);
  const filler = new Filler(storage, parts);
  const rows: ScaleRow[] = [];
  try {
    const bareInsertsPerSecond = await bareInsertRate(backend, dir, parts);
    const longHistory = Math.min(LONG_HISTORY, Math.floor(sizes[0]! / 4));
    await filler.page(LONG_HISTORY_TITLE, longHistory, false);
    for (const size of sizes) {
      const fillRendersPerSecond = await filler.fillTo(size);
      console.log(`scale ${backend.name}: ${filler.renders} renders stored (${fillRendersPerSecond.toFixed(0)}/s); measuring`);
      const ttlSweepMs = await medianTiming(async () => {
        const t = performance.now();
        await storage.sweepExpired();
        return performance.now() - t;
      });
      const bytes = await bytesOnDisk(backend, sqlitePath);
      const vacuumMs = backend.name === 'postgres' ? await vacuumAfterFill(backend.pgUrl!) : undefined;
      // Served from the store alone: the wiki is not reachable (its site info is stored), and any
      // request a read makes of it is counted. Every revision is stored with its parent, so ?ts=
      // is answered from storage too.
      // Started five times; the last one started is measured.
      let service!: Awaited<ReturnType<typeof startService>>;
      const startupMs = await medianTiming(async (run) => {
        const started = await startService(where, 'http://127.0.0.1:1', {}, yaml);
        if (run < TIMINGS - 1) await started.stop();
        else service = started;
        return started.startupMs;
      });
      try {
        const idle = rssMb(service.child.pid!).rss;
        const v1 = `/${DOMAIN}/v1/page/`;
        const pages = spread(filler.readable, READ_KEYS);
        const renders = spread(filler.readable.flatMap((page) => page.revs.map((r) => ({ title: page.title, ...r }))), READ_RENDERS);
        const paths = {
          latest: pages.map((k) => `${v1}${k.title}/html`),
          'by revid': renders.map((r) => `${v1}${r.title}/html/${r.rev}`),
          'by tid': renders.map((r) => `${v1}${r.title}/html/${r.tid}`),
          'by time (?ts=)': renders.map((r) => `${v1}${r.title}/html?ts=${filler.whenCurrent(r.rev)}`),
        };
        // Renders none of those reads names (nor any page's latest): read once each, at the end, by
        // a service that has read everything else, so nothing of theirs is in its memory.
        const named = new Set([...renders.map((r) => r.tid), ...pages.map((p) => p.revs.at(-1)!.tid)]);
        const unread = filler.readable.flatMap((page) => page.revs.filter((r) => !named.has(r.tid)).map((r) => `${v1}${page.title}/html/${r.rev}`));
        const wikiBefore = await metric(service.base, /^wiki_requests_total\{[^}]*\} (\d+)/gm);
        const reads: Record<string, Sample> = {};
        const bareReads: Record<string, Sample> = {};
        const bareWithRevisionReads: Record<string, Sample> = {};
        const storageReadsPerRequest: Record<string, { renders: number; revisions: number; renderCacheMisses: number }> = {};
        let firstReads: FirstReads | undefined;
        // Reads by revision and by tid beside their limit: the same row read by the driver alone,
        // and the render's row with its revision's, as a correct read needs them.
        const store = backend.name === 'sqlite' ? { domain: DOMAIN, sqlite: sqlitePath } : backend.name === 'postgres' ? { domain: DOMAIN, postgres: backend.pgUrl! } : undefined;
        const bare = store && (await startBareRows(store));
        const bareWithRevision = store && (await startBareRows({ ...store, revision: true }));
        try {
          for (const [name, list] of Object.entries(paths)) {
            // Rounds, each over every key, the bare server's in turn with the service's: one run's
            // tail is one hiccup of a shared machine.
            const rounds: Sample[] = [];
            const bareRounds: Sample[] = [];
            const bareWithRevisionRounds: Sample[] = [];
            const withBare = BARE_READS.includes(name);
            const round = (base: string) => load({ url: `${base}${list[0]}`, paths: list, headers: { 'accept-encoding': 'gzip' } }, seconds);
            const counted = { requests: 0, renders: 0, revisions: 0, renderCacheMisses: 0 };
            for (let r = 0; r < READ_ROUNDS; r++) {
              const before = await readCounts(service.base);
              rounds.push(await round(service.base));
              const after = await readCounts(service.base);
              counted.requests += after.requests - before.requests;
              counted.renders += after.renders - before.renders;
              counted.revisions += after.revisions - before.revisions;
              counted.renderCacheMisses += after.renderCacheMisses - before.renderCacheMisses;
              if (withBare && bare) bareRounds.push(await round(bare.base));
              if (withBare && bareWithRevision) bareWithRevisionRounds.push(await round(bareWithRevision.base));
            }
            reads[name] = medianSample(rounds);
            storageReadsPerRequest[name] = { renders: counted.renders / counted.requests, revisions: counted.revisions / counted.requests, renderCacheMisses: counted.renderCacheMisses / counted.requests };
            if (bareRounds.length) bareReads[name] = medianSample(bareRounds);
            if (bareWithRevisionRounds.length) bareWithRevisionReads[name] = medianSample(bareWithRevisionRounds);
          }
          if (bareWithRevision) firstReads = await firstReadsOf(service.base, bareWithRevision.base, unread);
        } finally {
          await bare?.stop();
          await bareWithRevision?.stop();
        }
        const wikiRequestsDuringReads = (await metric(service.base, /^wiki_requests_total\{[^}]*\} (\d+)/gm)) - wikiBefore;
        const listing = await walk(`${service.base}${v1}?limit=1000`);
        const history = { ...(await walk(`${service.base}${v1}${LONG_HISTORY_TITLE}/html/?limit=100`)), revisions: longHistory };
        // A render by tid alone, wherever it is in its page's history: five renders at each place (the first revision is hidden).
        const tids = filler.longHistoryTids;
        const byTid = (from: number) => timedOnce(tids.slice(from, from + 5).map((tid) => `${service.base}${v1}${LONG_HISTORY_TITLE}/html/${tid}`));
        const historyByTid = { newest: await byTid(tids.length - 5), middle: await byTid(Math.floor(tids.length / 2)), oldest: await byTid(1) };
        // The gauge holds the last sweep's time; sweeps run every second, so one sample a second.
        const transactionSweepMs = await medianTiming(async (run) => {
          if (run > 0) await sleep(1100);
          return 1000 * (await metric(service.base, /^transactions_sweep_seconds\{[^}]*\} ([\d.e-]+)/gm));
        });
        const snapshot = await snapshotRun(service.config);
        rows.push({
          backend: backend.name, renders: filler.renders, pages: filler.pages, fillRendersPerSecond, bareInsertsPerSecond,
          bytesPerRender: bytes / filler.renders, gzippedPartsPerRender: filler.partBytes / filler.renders, startupMs, rssMb: idle,
          reads, bareReads, bareWithRevisionReads, storageReadsPerRequest, firstReads, listing, history, historyByTid, ttlSweepMs, vacuumMs, transactionSweepMs, wikiRequestsDuringReads, snapshot, bodyOnRender,
        });
      } finally {
        await service.stop();
      }
    }
  } finally {
    await storage.close();
    // A store of a million renders is some 16 GB: not left behind (the other engines keep theirs),
    // unless WIKISTORE_BENCH_KEEP_STORE asks for it, to trace reads against it afterwards.
    if (process.env.WIKISTORE_BENCH_KEEP_STORE === '1') console.log(`scale ${backend.name}: store kept in ${dir}`);
    else fs.rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}
