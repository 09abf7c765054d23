import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import cassandra from 'cassandra-driver';
import { isStaleSchema, mapDriverError } from '../../src/storage/cassandra/cql-errors.js';
import { StorageError } from '../../src/storage/errors.js';

const { ResponseError, NoHostAvailableError, OperationTimedOutError } = cassandra.errors;
const codes = cassandra.types.responseErrorCodes;

function response(code: number, message: string, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new ResponseError(code, message), extra);
}

function mapped(err: unknown, paging = false): { kind: string; code: string } {
  const result = mapDriverError(err, paging);
  assert.ok(result instanceof StorageError, `expected a StorageError for ${String(err)}`);
  return { kind: result.kind, code: result.code };
}

describe("Cassandra driver errors in storage terms (what a client's status code rests on)", () => {
  it('answers a timed-out conditional write as an unknown outcome (503), never as a failed condition', () => {
    assert.deepEqual(mapped(response(codes.writeTimeout, 'CAS timeout', { writeType: 'CAS' })), { kind: 'unavailable', code: 'write-outcome-unknown' });
    assert.deepEqual(mapped(response(codes.writeTimeout, 'timeout', { writeType: 'SIMPLE' })), { kind: 'unavailable', code: 'write-timeout' });
  });

  it('answers too few replicas, overload and unreachable nodes with 503', () => {
    for (const code of [codes.unavailableException, codes.overloaded, codes.readTimeout, codes.readFailure, codes.writeFailure, codes.isBootstrapping]) {
      assert.equal(mapped(response(code, 'x')).kind, 'unavailable', `code ${code}`);
    }
    assert.equal(mapped(new NoHostAvailableError({}, 'none')).kind, 'unavailable');
    assert.equal(mapped(new OperationTimedOutError('slow', '127.0.0.1:9042')).kind, 'unavailable');
  });

  it('answers oversized writes and forged paging states with 400, and leaves other errors alone', () => {
    assert.deepEqual(mapped(response(codes.invalid, 'Rejected an oversized mutation (5/4 bytes)')), { kind: 'invalid', code: 'write-too-large' });
    assert.equal(mapped(response(codes.protocolError, 'Request is too big: length 17825859 exceeds maximum allowed length 16777216.')).code, 'write-too-large');
    assert.deepEqual(mapped(response(codes.invalid, 'Invalid value for the paging state'), true), { kind: 'invalid', code: 'invalid-paging-token' });
    const other = response(codes.syntaxError, 'bad CQL');
    assert.equal(mapDriverError(other, false), other, 'a bug stays a 500');
    assert.equal(mapDriverError(response(codes.invalid, 'x'), false) instanceof StorageError, false);
  });

  it('leaves "no such table or column" alone, for the operation to reload its definitions and retry', () => {
    const stale = [
      response(codes.invalid, 'unconfigured table t_1'),
      response(codes.invalid, 'Undefined column name extra in table d.t'),
      response(codes.unprepared, 'Prepared query with ID 1a not found'),
      new NoHostAvailableError({ '127.0.0.1:9042': response(codes.unprepared, 'not found'), '127.0.0.2:9042': response(codes.invalid, 'unconfigured table t') }, 'all failed'),
    ];
    for (const err of stale) {
      assert.equal(isStaleSchema(err), true, String(err));
      assert.equal(mapDriverError(err, false), err);
    }
    const down = new NoHostAvailableError({ '127.0.0.1:9042': response(codes.unprepared, 'not found'), '127.0.0.2:9042': new Error('connection refused') }, 'all failed');
    assert.equal(isStaleSchema(down), false, 'a host that could not be asked says nothing about schemas');
    assert.equal(isStaleSchema(response(codes.invalid, 'Invalid value for the paging state')), false);
  });
});
