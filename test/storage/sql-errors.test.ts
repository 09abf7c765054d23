import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { postgresDialect } from '../../src/storage/postgres/postgres-dialect.js';
import { sqliteDialect } from '../../src/storage/sqlite/sqlite-dialect.js';
import { MARIADB_COLLATION, mariadbDialect } from '../../src/storage/mariadb/mariadb-dialect.js';

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

  it('tells MariaDB lock waits, deadlocks and lost connections (503) from a value that does not fit (400) and the rest', () => {
    const dialect = mariadbDialect(MARIADB_COLLATION);
    const withErrno = (errno: number, code = 'ER_X') => Object.assign(new Error('x'), { errno, code });
    for (const errno of [1205, 1213, 1040, 1053, 2006, 2013]) assert.equal(dialect.isUnavailable(withErrno(errno)), true, String(errno));
    for (const code of ['ECONNREFUSED', 'PROTOCOL_CONNECTION_LOST', 'POOL_CLOSED', 'LOCK_TIMEOUT']) assert.equal(dialect.isUnavailable(withCode(code)), true, code);
    assert.equal(dialect.isUnavailable(Object.assign(new Error('x'), { fatal: true })), true, 'any fatal error of the connection');
    for (const errno of [1062, 1064, 1146, 1406]) assert.equal(dialect.isUnavailable(withErrno(errno)), false, String(errno));
    assert.equal(dialect.isStaleSchema(withErrno(1146)), true);
    assert.equal(dialect.isStaleSchema(withErrno(1054)), true);
    assert.equal(dialect.isStaleSchema(withErrno(1064)), false);
    assert.equal(dialect.isValueRefused!(withErrno(1406)), true);
    assert.equal(dialect.isValueRefused!(withErrno(1213)), false);
  });
});
