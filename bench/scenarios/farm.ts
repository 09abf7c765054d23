import Database from 'better-sqlite3';
import cassandra from 'cassandra-driver';
import mysql from 'mysql2/promise';
import postgres from 'postgres';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { load, rssMb } from '../harness.js';
import { ADMIN_TOKEN, startService } from '../service.js';

/**
 * A farm, as its operator would run the service in front of it: one pattern in the config, a
 * synthetic farm behind it. **The farm is a fake** (an Action API answering site info for the
 * wikis w0 … w{N-1} by path, and "no such wiki" for any other name): what is measured is the
 * service's cost per wiki (start-up, tables, memory, background work), not rendering.
 */
/** An engine the farm is run on, and how its tables are counted (all of them: the bench reports growth). */
export interface FarmEngine {
  name: string;
  storage: Parameters<typeof startService>[0];
  /** `dir`: the service's data dir (SQLite's file is there). */
  tables(dir: string): Promise<number>;
}

export const sqliteFarm: FarmEngine = {
  name: 'sqlite',
  storage: 'sqlite',
  async tables(dir) {
    const db = new Database(path.join(dir, 'db.sqlite3'), { readonly: true });
    try {
      return (db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").get() as { n: number }).n;
    } finally {
      db.close();
    }
  },
};

export function postgresFarm(url: string): FarmEngine {
  return {
    name: 'postgres',
    storage: { yaml: `  backend: postgres\n  url: ${JSON.stringify(url)}` },
    async tables() {
      const sql = postgres(url, { max: 1, onnotice: () => {} });
      try {
        return Number((await sql`SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = current_schema()`)[0]!.n);
      } finally {
        await sql.end();
      }
    },
  };
}

export function mariadbFarm(url: string): FarmEngine {
  return {
    name: 'mariadb',
    storage: { yaml: `  backend: mariadb\n  url: ${JSON.stringify(url)}` },
    async tables() {
      const db = await mysql.createConnection(url);
      try {
        const [rows] = await db.query('SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = database()');
        return Number((rows as { n: number }[])[0]!.n);
      } finally {
        await db.end();
      }
    },
  };
}

export function cassandraFarm(hosts: string[]): FarmEngine {
  const replicas = Math.min(3, hosts.length);
  return {
    name: `cassandra (${hosts.length} node${hosts.length > 1 ? 's' : ''})`,
    storage: { yaml: `  backend: cassandra\n  contact_points: ${JSON.stringify(hosts)}\n  local_data_center: datacenter1\n  keyspace_prefix: benchfarm\n  replication: { datacenter1: ${replicas} }` },
    async tables() {
      const client = new cassandra.Client({ contactPoints: hosts, localDataCenter: 'datacenter1' });
      try {
        const result = await client.execute('SELECT keyspace_name FROM system_schema.tables');
        return result.rows.filter((r) => String(r.keyspace_name).startsWith('benchfarm')).length;
      } finally {
        await client.shutdown();
      }
    },
  };
}

export interface FarmRow {
  engine: string;
  wikis: number;
  startupMs: number;
  tables: number;
  idleRssMb: number;
  /** Over an idle window: requests to the farm and writes to the store, per second. */
  idleFarmRps: number;
  idleStoreWritesPerS: number;
  served: number;
  servedRssMb: number;
  tablesAfterServing: number;
  /** Key-value reads spread over every wiki served, and as many distinct reads on one wiki. */
  spreadRps: number;
  oneWikiRps: number;
  floodRequests: number;
  floodStatuses: Record<string, number>;
  floodRssMb: number;
  tablesAfterFlood: number;
  farmRequestsForFlood: number;
}

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

async function fakeFarm(wikis: number): Promise<{ url: string; asked: () => number; close(): Promise<void> }> {
  let asked = 0;
  const server = http.createServer((req, res) => {
    asked++;
    const label = /^\/([^/]+)\//.exec(req.url ?? '')?.[1] ?? '';
    const n = /^w(\d+)$/.exec(label)?.[1];
    if (n === undefined || Number(n) >= wikis) {
      res.writeHead(404, { 'content-type': 'text/html' }).end('<html>No such wiki.</html>');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
      query: {
        general: { generator: 'MediaWiki 1.39.10', lang: 'en', case: 'first-letter', legaltitlechars: " %!\"$&'()*,\\-.\\/0-9:;=?@A-Z\\\\^_`a-z~\\x80-\\xFF+" },
        namespaces: { 0: { id: 0, case: 'first-letter', name: '', content: true } }, namespacealiases: [], specialpagealiases: [],
      },
    }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, asked: () => asked, close: () => new Promise((r) => server.close(() => r())) };
}

async function call(url: string, method = 'GET', body?: string): Promise<number> {
  const res = await fetch(url, { method, headers: { ...admin, ...(body ? { 'content-type': 'text/plain' } : {}) }, body });
  await res.arrayBuffer();
  return res.status;
}

/** Writes the store was asked for so far (from the service's own metrics). */
async function storeWrites(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`, { headers: admin })).text();
  let n = 0;
  for (const m of text.matchAll(/^storage_operation_seconds_count\{[^}]*operation="(put|delete)"[^}]*\} (\d+)/gm)) n += Number(m[2]);
  return n;
}

/** `n` operations, `concurrency` at a time. */
async function pooled(n: number, concurrency: number, op: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < n) await op(next++);
  }));
}

export async function farmScenario(engines: FarmEngine[], sizes: number[], quick: boolean): Promise<FarmRow[]> {
  const rows: FarmRow[] = [];
  for (const engine of engines) for (const wikis of sizes) rows.push(await farmRun(engine, wikis, quick));
  return rows;
}

async function farmRun(engine: FarmEngine, wikis: number, quick: boolean): Promise<FarmRow> {
  {
    const farm = await fakeFarm(wikis);
    // The engine's tables before: the farm's are those it adds (server engines hold others' too).
    const before = engine.name === 'sqlite' ? 0 : await engine.tables('');
    const service = await startService(engine.storage, undefined, {}, 'follow_changes: stored\nfarm:\n  discoveries_per_second: 200\n', 0, '',
      `  "*.farm.bench":\n    action_api: "${farm.url}/{label}/api.php"\n    rest_api: "${farm.url}/{label}/rest.php"\n`);
    const tables = async () => (await engine.tables(service.dir)) - before;
    try {
      const pid = service.child.pid!;
      const row = { engine: engine.name, wikis, startupMs: Math.round(service.startupMs), tables: await tables() } as FarmRow;
      await new Promise((r) => setTimeout(r, 1000));
      row.idleRssMb = rssMb(pid).rss;
      const idleSeconds = quick ? 5 : 10;
      const [asked0, writes0] = [farm.asked(), await storeWrites(service.base)];
      await new Promise((r) => setTimeout(r, idleSeconds * 1000));
      row.idleFarmRps = (farm.asked() - asked0) / idleSeconds;
      row.idleStoreWritesPerS = ((await storeWrites(service.base)) - writes0) / idleSeconds;
      // Served: up to a thousand wikis, each with a bucket of values.
      row.served = Math.min(wikis, 1000);
      const values = quick ? 5 : 20;
      const url = (i: number, rest = '') => `${service.base}/w${i}.farm.bench/sys/key_value/kv${rest}`;
      await pooled(row.served, 16, async (i) => {
        if ((await call(url(i), 'PUT')) >= 300) throw new Error(`bucket of w${i}`);
        for (let v = 0; v < values; v++) if ((await call(url(i, `/v${v}`), 'PUT', `w${i} value ${v}`)) >= 300) throw new Error(`value of w${i}`);
      });
      row.servedRssMb = rssMb(pid).rss;
      row.tablesAfterServing = await tables();
      const spread = Array.from({ length: row.served * values }, (_, k) => `/w${k % row.served}.farm.bench/sys/key_value/kv/v${Math.floor(k / row.served)}`);
      // One wiki holding as many values: the same hot set, in one wiki.
      await pooled(spread.length, 16, async (k) => {
        if ((await call(url(0, `/u${k}`), 'PUT', `w0 value ${k}`)) >= 300) throw new Error(`value u${k} of w0`);
      });
      const one = spread.map((_, k) => `/w0.farm.bench/sys/key_value/kv/u${k}`);
      const seconds = quick ? 2 : 4;
      row.spreadRps = Math.round((await load({ url: service.base, paths: spread, headers: admin }, seconds)).rps);
      row.oneWikiRps = Math.round((await load({ url: service.base, paths: one, headers: admin }, seconds)).rps);
      // A client sending random subdomains of the pattern.
      row.floodRequests = quick ? 5_000 : 20_000;
      const asked1 = farm.asked();
      const statuses: Record<string, number> = {};
      await pooled(row.floodRequests, 32, async () => {
        const status = await call(`${service.base}/x${Math.random().toString(36).slice(2, 12)}.farm.bench/sys/key_value/kv/k`);
        statuses[status] = (statuses[status] ?? 0) + 1;
      });
      row.floodStatuses = statuses;
      row.farmRequestsForFlood = farm.asked() - asked1;
      row.floodRssMb = rssMb(pid).rss;
      row.tablesAfterFlood = await tables();
      console.log(JSON.stringify(row));
      return row;
    } finally {
      await service.stop();
      await farm.close();
    }
  }
}
