import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KeptPlans, withValues } from '../../../src/storage/kept-plans.js';
import { planQuery, type QueryPlan } from '../../../src/storage/query-plan.js';
import { describe as describeTable, normalizeSchema } from '../../../src/storage/schema.js';

const info = () =>
  describeTable(normalizeSchema({
    table: 'revs',
    attributes: { title: 'string', rev: 'int', body: 'string', tags: 'set<string>' },
    index: [{ attribute: 'title', type: 'hash' }, { attribute: 'rev', type: 'range', order: 'desc' }],
  }, 'revs'));
const encode = (_type: unknown, value: unknown) => value;

/** Plans `query` as an engine does: its shape's kept plan, else planned in full and kept; counts the plans made. */
function planner() {
  const kept = new KeptPlans<string>(encode);
  let made = 0;
  const plan = (table: ReturnType<typeof info>, fields: Record<string, unknown>, keeps = true): { plan: QueryPlan; made: string; values?: unknown[] } => {
    const query = { table: 'revs', ...fields };
    const found = kept.find(table, query, '');
    if (found) return { plan: withValues(found.kept.plan, found.values), made: found.kept.made, values: found.values };
    const planned = planQuery(table, query, encode);
    const statement = `statement ${++made} of ${planned.predicates.map((x) => x.column).join(',')}`;
    if (keeps) kept.keep(table, query, '', planned, statement);
    return { plan: planned, made: statement };
  };
  return { plan, made: () => made };
}

describe('kept plans: a key read planned once per shape', () => {
  it("answers a later read of a shape with the kept plan and that read's own values", () => {
    const table = info();
    const { plan, made } = planner();
    const first = plan(table, { attributes: { title: 'A', rev: { le: 10 } }, limit: 2 });
    assert.equal(first.values, undefined);
    const second = plan(table, { attributes: { title: 'B', rev: { le: 20 } }, limit: 2 });
    assert.deepEqual(second.values, ['B', 20]);
    assert.deepEqual(second.plan.predicates.map((p) => [p.column, p.op, p.value]), [['title', 'eq', 'B'], ['rev', 'le', 20]]);
    assert.equal(second.made, 'statement 1 of title,rev');
    assert.equal(made(), 1);
    // The first read's plan is not changed by the second.
    assert.deepEqual(first.plan.predicates.map((p) => p.value), ['A', 10]);
  });

  it('plans a read of another shape, operator, limit or projection anew', () => {
    const table = info();
    const { plan, made } = planner();
    plan(table, { attributes: { title: 'A', rev: { le: 10 } } });
    for (const query of [
      { attributes: { title: 'A', rev: { lt: 10 } } },
      { attributes: { title: 'A', rev: { le: 10 } }, limit: 1 },
      { attributes: { title: 'A', rev: { le: 10 } }, proj: ['body'] },
      { attributes: { title: 'A', rev: 10 } },
    ]) assert.equal(plan(table, query).values, undefined);
    assert.equal(made(), 5);
  });

  it('refuses a bad value in a kept shape as the planner refuses it', () => {
    const table = info();
    const { plan } = planner();
    plan(table, { attributes: { title: 'A', rev: 1 } });
    assert.throws(() => plan(table, { attributes: { title: 'A', rev: 'one' } }), /rev/);
    assert.throws(() => plan(table, { attributes: { title: null, rev: 1 } }), /title/);
  });

  it('keeps no scan, no paging, no plan its engine will not have kept, and nothing across definitions', () => {
    const table = info();
    const { plan } = planner();
    plan(table, { attributes: {} });
    assert.equal(plan(table, { attributes: {} }).values, undefined, 'a scan of the table');
    plan(table, { attributes: { title: 'A' }, next: undefined });
    assert.equal(plan(table, { attributes: { title: 'A' }, next: undefined }).values, undefined, 'a field outside the shape');
    plan(table, { attributes: { title: 'C' } }, false);
    assert.equal(plan(table, { attributes: { title: 'C' } }, false).values, undefined, 'refused by the engine');
    plan(table, { attributes: { title: 'D' } });
    assert.deepEqual(plan(table, { attributes: { title: 'E' } }).values, ['E']);
    // A table migrated or reloaded is a new definition.
    assert.equal(plan(info(), { attributes: { title: 'E' } }).values, undefined);
  });
});
