import Database from 'better-sqlite3';
import http from 'node:http';
import postgres from 'postgres';
import { physicalNames } from '../src/storage/sql/names.js';
import { sortableToTimeuuid, timeuuidToSortable } from '../src/util/timeuuid.js';

/**
 * The limit of a read that misses every cache: node:http and the engine's driver reading the one
 * row a page's render is stored in (the service's `parsoid` table, as the service laid it out)
 * and sending its stored HTML as it is, with an ETag. `/{domain}/v1/page/{title}/html/{revid}`
 * reads the revision's newest render; `…/html/{tid}` the render by its page and tid. With
 * `revision: true` it also reads the revision's row with its page's static columns (whether its
 * text is hidden, which render is current), as a correct read must: the same two rows the service
 * reads. Nothing is kept between requests. argv[2] is a JSON {domain, sqlite?: path, postgres?:
 * url, revision?: boolean}; the port goes to stdout.
 */
interface Spec {
  domain: string;
  sqlite?: string;
  postgres?: string;
  revision?: boolean;
}

interface Found {
  rev: number | bigint | string;
  tid: string;
  html: Buffer;
}

type Read = (title: string, revision: string) => Promise<Found | undefined>;

const REVID = /^\d+$/;

function sqliteReads(file: string, table: string, revisions: string | undefined): Read {
  const db = new Database(file, { readonly: true });
  const byRev = db.prepare(`SELECT rev, tid, html FROM "${table}" WHERE title = ? AND rev = ? ORDER BY tid DESC LIMIT 1`);
  const byTid = db.prepare(`SELECT rev, tid, html FROM "${table}" WHERE title = ? AND tid = ? LIMIT 1`);
  const render = (title: string, revision: string) =>
    (REVID.test(revision) ? byRev.get(title, Number(revision)) : byTid.get(title, timeuuidToSortable(revision))) as Found | undefined;
  if (!revisions) return async (title, revision) => render(title, revision);
  const revisionRow = db.prepare(`SELECT * FROM "${revisions}" m LEFT JOIN "${revisions}_s" s ON s.title = m.title WHERE m.title = ? AND m.rev = ?`);
  return async (title, revision) => {
    const byRevid = REVID.test(revision);
    const row = byRevid ? (revisionRow.get(title, Number(revision)) as { text_hidden: number } | undefined) : undefined;
    const found = render(title, revision);
    const checked = byRevid ? row : found && (revisionRow.get(title, found.rev) as { text_hidden: number } | undefined);
    return checked && !checked.text_hidden ? found : undefined;
  };
}

function postgresReads(url: string, table: string, revisions: string | undefined): Read {
  const sql = postgres(url, { max: 16 });
  const render = async (title: string, revision: string) => {
    const rows = REVID.test(revision)
      ? await sql.unsafe(`SELECT rev, tid, html FROM "${table}" WHERE title = $1 AND rev = $2 ORDER BY tid DESC LIMIT 1`, [title, revision], { prepare: true })
      : await sql.unsafe(`SELECT rev, tid, html FROM "${table}" WHERE title = $1 AND tid = $2 LIMIT 1`, [title, timeuuidToSortable(revision)], { prepare: true });
    return rows[0] as unknown as Found | undefined;
  };
  if (!revisions) return render;
  const revisionRow = async (title: string, rev: unknown) =>
    (await sql.unsafe(`SELECT * FROM "${revisions}" m LEFT JOIN "${revisions}_s" s ON s.title = m.title WHERE m.title = $1 AND m.rev = $2`, [title, String(rev)], { prepare: true }))[0] as unknown as { text_hidden: boolean } | undefined;
  return async (title, revision) => {
    const [row, found] = REVID.test(revision) ? await Promise.all([revisionRow(title, revision), render(title, revision)]) : [undefined, await render(title, revision)];
    const checked = row ?? (found && !REVID.test(revision) ? await revisionRow(title, found.rev) : undefined);
    return checked && !checked.text_hidden ? found : undefined;
  };
}

const spec = JSON.parse(process.argv[2]!) as Spec;
const table = physicalNames(spec.domain, 'parsoid').main;
const revisions = spec.revision ? physicalNames(spec.domain, 'page_revisions').main : undefined;
const read = spec.sqlite ? sqliteReads(spec.sqlite, table, revisions) : postgresReads(spec.postgres!, table, revisions);
const prefix = `/${spec.domain}/v1/page/`;

const server = http.createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  req.resume();
  const parts = (req.url ?? '').slice(prefix.length).split('/');
  const fail = (status: number) => {
    res.writeHead(status, { 'content-length': 0 });
    res.end();
  };
  if (parts.length !== 3 || parts[1] !== 'html') return fail(400);
  read(decodeURIComponent(parts[0]!), parts[2]!).then((row) => {
    if (!row) return fail(404);
    res.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'content-encoding': 'gzip',
      etag: `"${row.rev}/${sortableToTimeuuid(row.tid)}"`,
      'cache-control': 'max-age=86400',
      'content-length': row.html.length,
    });
    res.end(row.html);
  }, () => fail(500));
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
