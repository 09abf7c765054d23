import { KeptPlans } from '../kept-plans.js';
import { planQuery, type QueryPlan } from '../query-plan.js';
import type { TableInfo } from '../schema.js';
import type { Query } from '../types.js';
import type { ToEngine } from '../values.js';
import { selectStatement, type Statement } from './dml.js';
import type { Dialect } from './driver.js';
import type { PhysicalNames } from './names.js';

/**
 * Statements of point lookups and partition reads, kept with their plans per table definition
 * (kept-plans.ts): planning a query and writing its SQL cost more than a tenth of an uncached
 * SQLite point read, and a later read of the same shape brings only its key values. `withEpoch`:
 * statements that read the schema epoch with the rows (see `selectStatement`).
 */
export class PointReads {
  private readonly kept: KeptPlans<Statement>;

  constructor(private readonly encode: ToEngine, private readonly recursiveSkipScan: boolean, private readonly indexHint?: Dialect['indexHint']) {
    this.kept = new KeptPlans(encode);
  }

  /**
   * The plan and statement of `query`; a query that is not a plain key lookup is planned in full.
   * A kept plan's predicates hold the values it was planned with: the statement holds this read's.
   */
  statement(info: TableInfo, names: PhysicalNames, query: Query, now: number, withEpoch = true): { plan: QueryPlan; stmt: Statement } {
    const variant = withEpoch ? 'e' : '';
    const found = this.kept.find(info, query, variant);
    if (found) {
      const { plan, made } = found.kept;
      found.values.push(now);
      return { plan, stmt: { sql: made.sql, params: found.values, pinned: made.pinned } };
    }
    const plan = planQuery(info, query, this.encode);
    const stmt = selectStatement(info, names, plan, now, withEpoch, this.recursiveSkipScan, this.indexHint);
    // Kept only where the statement's parameters are the predicates' values, then `now`, as a kept one's are rebuilt.
    if (stmt.params.length === plan.predicates.length + 1 && plan.predicates.every((p, i) => stmt.params[i] === p.value) && stmt.params[plan.predicates.length] === now) {
      this.kept.keep(info, query, variant, plan, stmt);
    }
    return { plan, stmt };
  }
}
