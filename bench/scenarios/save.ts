import { median } from '../harness.js';
import { DOMAIN, startService } from '../service.js';
import { api, PAGEBUNDLE_999 } from '../wiki-api.js';

export interface SaveReport {
  serviceMs: number;
  directUpstreamMs: number;
  overheadMs: number;
  /** The slowest save through the service (with 20 samples, the tail there is). */
  serviceMaxMs: number;
  directMaxMs: number;
  samples: number;
}



/**
 * What a save costs over the upstream work it cannot avoid: the same edit made directly (token,
 * then action=edit) plus the render and metadata of the new revision a save stores (Parsoid's own
 * time). The difference is the service's: locks, transaction, storage. Alternating order.
 */
export async function saveScenario(wikiUrl: string, rounds: number): Promise<SaveReport> {
  const service = await startService('sqlite', wikiUrl);
  const title = `Bench save ${Date.now().toString(36)}`;
  const key = title.replace(/ /g, '_');
  const v1 = `${service.base}/${DOMAIN}/v1`;
  try {
    let latest = (await api(wikiUrl, { action: 'edit', title, text: 'Benchmark page, version 0.', token: '+\\' }, true)).edit.newrevid as number;
    await fetch(`${v1}/page/${encodeURIComponent(key)}/html`).then((r) => r.arrayBuffer());
    const direct = async (n: number) => {
      const t0 = performance.now();
      const ctx = await api(wikiUrl, { action: 'query', meta: 'tokens', prop: 'revisions', titles: title, rvprop: 'ids|timestamp' });
      const base = ctx.query.pages[0].revisions[0];
      const edit = await api(wikiUrl, { action: 'edit', title, text: `Benchmark page, direct ${n}.`, baserevid: String(base.revid), basetimestamp: base.timestamp, token: ctx.query.tokens.csrftoken }, true);
      const rev = edit.edit.newrevid as number;
      await Promise.all([
        fetch(`${wikiUrl}/rest.php/127.0.0.1/v3/page/pagebundle/${encodeURIComponent(key)}/${rev}`, { headers: { accept: PAGEBUNDLE_999 } }).then((r) => r.arrayBuffer()),
        fetch(`${wikiUrl}/rest.php/127.0.0.1/v3/page/wikitext/${encodeURIComponent(key)}/${rev}`).then((r) => r.arrayBuffer()),
        api(wikiUrl, { action: 'query', prop: 'revisions|info', revids: String(rev), rvprop: 'ids|timestamp|user|userid|size|sha1|comment|flags|contentmodel', rvslots: 'main' }),
      ]);
      latest = rev;
      return performance.now() - t0;
    };
    const viaService = async (n: number) => {
      const t0 = performance.now();
      const res = await fetch(`${v1}/page/${encodeURIComponent(key)}`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ wikitext: `Benchmark page, service ${n}.`, base_revid: latest }),
      });
      const body = (await res.json()) as { rev?: number };
      if (res.status !== 201) throw new Error(`save answered ${res.status}: ${JSON.stringify(body)}`);
      latest = body.rev!;
      return performance.now() - t0;
    };
    await viaService(-1);
    await direct(-1);
    const serviceTimes: number[] = [];
    const directTimes: number[] = [];
    for (let i = 0; i < rounds; i++) {
      if (i % 2 === 0) {
        directTimes.push(await direct(i));
        serviceTimes.push(await viaService(i));
      } else {
        serviceTimes.push(await viaService(i));
        directTimes.push(await direct(i));
      }
    }
    const diffs = serviceTimes.map((s, i) => s - directTimes[i]!);
    return {
      serviceMs: median(serviceTimes), directUpstreamMs: median(directTimes), overheadMs: median(diffs),
      serviceMaxMs: Math.max(...serviceTimes), directMaxMs: Math.max(...directTimes), samples: diffs.length,
    };
  } finally {
    await service.stop();
  }
}
