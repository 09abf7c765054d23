import { isDeepStrictEqual } from 'node:util';
import { createHash } from 'node:crypto';
import type { TableInfo } from '../schema.js';
import { q, type CqlTable, type IndexTable } from './cql-schema.js';
import type { CqlSession, CqlRow } from './cql-session.js';
import { deleteCql, readCql, type CqlStatement } from './cql-statements.js';
import { expiryOf, fromCql } from './cql-values.js';

/** Index entries written at once while an index is filled from its table's rows. */
const FILL_PARALLEL = 64;

export interface Table {
  info: TableInfo;
  cql: CqlTable;
  /** Qualified name of the main table, as statements name it (see `definitionTag`). */
  main: string;
  /** Each index table's qualified name, as statements name it. */
  indexNames: Map<string, string>;
}

/**
 * A comment naming the columns' types, put after a table's name in every statement: the driver
 * keeps prepared statements (and the column types it encodes values by) per statement text, so a
 * table recreated with another type under a column's name must be named by other text.
 */
export function definitionTag(info: TableInfo): string {
  return ` /* ${createHash('sha1').update(JSON.stringify(info.schema.attributes)).digest('hex').slice(0, 12)} */`;
}

/**
 * Secondary indexes kept as tables of their own: an entry written after its row, the old one
 * removed when the row's indexed values move, all of a row's entries removed before the row.
 */
export class IndexUpkeep {
  constructor(private readonly session: CqlSession) {}

  sameValue(info: TableInfo, column: string, a: unknown, b: unknown): boolean {
    const type = info.schema.attributes[column]!;
    return isDeepStrictEqual(fromCql(type, a), fromCql(type, b));
  }

  /** Whether `key` names its entity's newest live version (`entity`: the key without its `tid`). */
  async isCurrentVersion(table: Table, versions: { tid: string; entity: string[] }, key: Record<string, unknown>): Promise<boolean> {
    const { info } = table;
    const pinned = versions.entity.map((c) => `${q(c)} = ?`).join(' AND ');
    // Newer versions come first when the tid is declared descending, last otherwise.
    const newestFirst = info.rangeOrder[versions.tid] === 'desc';
    const order = newestFirst ? '' : ` ORDER BY ${info.range.map((c) => `${q(c)} DESC`).join(', ')}`;
    const result = await this.session.run({ query: `SELECT ${q(versions.tid)} FROM ${table.main} WHERE ${pinned}${order} LIMIT 1`, params: versions.entity.map((c) => key[c]) });
    const newest = (result.rows as unknown as CqlRow[])[0]?.[versions.tid];
    return newest !== undefined && newest !== null && String(newest) === String(key[versions.tid]);
  }

  indexesMove(table: Table): boolean {
    const keys = new Set([...table.info.hash, ...table.info.range]);
    return this.indexedColumns(table).some((c) => !keys.has(c));
  }

  indexedColumns(table: Table): string[] {
    return [...new Set([...table.cql.indexes.values()].flatMap((i) => i.columns))];
  }

  async indexedValues(table: Table, key: Record<string, unknown>): Promise<CqlRow | undefined> {
    const [row] = (await this.session.run(readCql(table.main, key, this.indexedColumns(table)))).rows as unknown as CqlRow[];
    return row;
  }

  /** After the primary row: each index's entry for its new values, and the old entry removed if it moved. */
  async updateIndexes(table: Table, after: CqlRow, before: CqlRow | undefined, ttl: number): Promise<void> {
    for (const index of table.cql.indexes.values()) {
      const indexTable = table.indexNames.get(index.table)!;
      const complete = (row: CqlRow | undefined) => row !== undefined && index.columns.every((c) => row[c] !== null && row[c] !== undefined);
      const entry = (row: CqlRow) => Object.fromEntries(index.columns.map((c) => [c, row[c]]));
      const moved = complete(before) && index.columns.some((c) => !this.sameValue(table.info, c, before![c], after[c]));
      if (moved) await this.session.runWrites([deleteCql(indexTable, entry(before!))]);
      if (complete(after)) await this.session.runWrites([this.insertEntry(indexTable, entry(after), ttl)]);
    }
  }

  private insertEntry(indexTable: string, entry: Record<string, unknown>, ttl: number): CqlStatement {
    const columns = Object.keys(entry);
    return {
      query: `INSERT INTO ${indexTable} (${columns.map(q).join(', ')}) VALUES (${columns.map(() => '?').join(', ')}) USING TTL ?`,
      params: [...Object.values(entry), ttl],
    };
  }

  /** A new index on a table with rows: an entry for every row that has the index's keys. */
  async fillIndex(table: Table, index: IndexTable): Promise<void> {
    const indexTable = table.indexNames.get(index.table)!;
    for await (const page of this.session.pages({ query: `SELECT ${index.columns.map(q).join(', ')}, "_exp" FROM ${table.main}`, params: [] })) {
      const entries = page
        .filter((row) => index.columns.every((c) => row[c] !== null && row[c] !== undefined))
        .map((row) => {
          const expires = expiryOf(row._exp);
          return this.insertEntry(indexTable, Object.fromEntries(index.columns.map((c) => [c, row[c]])), expires === null ? 0 : Math.max(1, Math.ceil((expires - Date.now()) / 1000)));
        });
      // Side by side, FILL_PARALLEL at a time: an index added to a table of a million rows (a
      // migration at start-up) is written in minutes, where one entry after the other took hours.
      for (let i = 0; i < entries.length; i += FILL_PARALLEL) await Promise.all(entries.slice(i, i + FILL_PARALLEL).map((entry) => this.session.runWrites([entry])));
    }
  }

  /** Removes the index entries of the rows a key (or key prefix) names, before the rows go. */
  async removeEntries(table: Table, key: Record<string, unknown>): Promise<void> {
    if (table.cql.indexes.size === 0) return;
    const rows = await this.session.all(readCql(table.main, key, this.indexedColumns(table)));
    for (const row of rows) {
      for (const index of table.cql.indexes.values()) {
        if (index.columns.some((c) => row[c] === null || row[c] === undefined)) continue;
        await this.session.runWrites([deleteCql(table.indexNames.get(index.table)!, Object.fromEntries(index.columns.map((c) => [c, row[c]])))]);
      }
    }
  }
}
