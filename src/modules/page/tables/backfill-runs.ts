import { TableClient } from '../../../table-access/table-client.js';
import type { RequestContext } from '../../../router/types.js';

/** The backfill's record of its last run over every content page that finished. */
export const COMPLETE_RUN = 'complete:content';

/** When (wiki time) the last finished backfill of every content page began, if one finished. */
export async function completedContentRun(ctx: RequestContext, domain: string): Promise<number | undefined> {
  const [row] = (await new TableClient(domain, 'page_backfill').query(ctx, { attributes: { run: COMPLETE_RUN } })).items;
  return row?.started ? Date.parse(row.started as string) : undefined;
}
