import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { postgresDialect } from '../../src/storage/postgres/postgres-dialect.js';
import { sqliteDialect } from '../../src/storage/sqlite/sqlite-dialect.js';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('SQL engine errors in storage terms', () => {
  it('tells PostgreSQL failures worth retrying (503) from the rest', () => {
    for (const code of ['ECONNREFUSED', 'CONNECTION_CLOSED', 'CONNECT_TIMEOUT', '08006', '53300', '57P01', '57P03', '40001', '40P01']) {
      assert.equal(postgresDialect.isUnavailable(withCode(code)), true, code);
    }
    for (const code of ['23505', '42601', '42P01', '22P02']) assert.equal(postgresDialect.isUnavailable(withCode(code)), false, code);
    assert.equal(postgresDialect.isUnavailable(new Error('no code')), false);
  });

  it('tells a table or column missing under a statement (changed elsewhere) from other errors', () => {
    assert.equal(postgresDialect.isStaleSchema(withCode('42P01')), true);
    assert.equal(postgresDialect.isStaleSchema(withCode('42703')), true);
    assert.equal(postgresDialect.isStaleSchema(withCode('42601')), false);
    assert.equal(sqliteDialect.isStaleSchema(withCode('SQLITE_ERROR', 'no such table: t_1')), true);
    assert.equal(sqliteDialect.isStaleSchema(withCode('SQLITE_ERROR', 'table t_1 has no column named v')), true);
    assert.equal(sqliteDialect.isStaleSchema(withCode('SQLITE_ERROR', 'near "x": syntax error')), false);
    assert.equal(sqliteDialect.isUnavailable(withCode('SQLITE_BUSY')), true);
    assert.equal(sqliteDialect.isUnavailable(withCode('SQLITE_BUSY_SNAPSHOT')), true);
    assert.equal(sqliteDialect.isUnavailable(withCode('SQLITE_CONSTRAINT_PRIMARYKEY')), false);
  });
});
