import { storageScenarios } from './dist/bench/scenarios/storage.js';
import { pageScenarios } from './dist/bench/scenarios/page.js';
import { pageEngineScenarios } from './dist/bench/scenarios/page-engines.js';
import { noticesScenario } from './dist/bench/scenarios/notices.js';
const opts = { seconds: 2, rounds: 5 };
const which = process.argv.slice(2);
const show = (c) => console.log(JSON.stringify({ name: c.scenario, ratio: +c.ratio.toFixed(3), spread: c.ratioSpread, svc: c.service, base: c.baseline, met: c.met }));
const wiki = 'http://127.0.0.1:8089';
const pg = 'postgres://wikistore_test:wikistore_test@127.0.0.1:5432/wikistore_benchfocus';
const maria = 'mysql://wikistore_test:wikistore_test@127.0.0.1:3306/wikistore_qbench';
if (which.includes('storage')) for (const c of await storageScenarios('mariadb', { backend: 'mariadb', url: maria, pool_size: 10 }, opts)) show(c);
if (which.includes('page')) {
  const page = await pageScenarios(wiki, opts);
  for (const c of page.comparisons) show(c);
  console.log(JSON.stringify({ coldMiss: page.coldMiss, article: page.article }));
  if (which.includes('engines')) {
    const engines = [{ name: 'sqlite', storage: 'sqlite' }, { name: 'postgres', storage: { yaml: `  backend: postgres\n  url: ${JSON.stringify(pg)}` } }, { name: 'mariadb', storage: { yaml: `  backend: mariadb\n  url: ${JSON.stringify(maria)}` } }];
    if (process.env.CASS) engines.push({ name: 'cassandra', storage: { yaml: `  backend: cassandra\n  contact_points: ["127.0.0.1"]\n  local_data_center: datacenter1\n  keyspace_prefix: benchpage\n  replication: { datacenter1: 1 }` } });
    for (const c of await pageEngineScenarios(wiki, page.article.title, engines, opts)) show(c);
  }
}
if (which.includes('notices')) console.log(JSON.stringify(await noticesScenario(wiki, 60)));
