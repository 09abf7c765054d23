import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { admin, request, sqliteConfig, startServer, tempDir, type TestServer } from '../helpers.js';
import { startFakeFarm, type FakeFarm } from '../fake-farm.js';
import type { Config } from '../../src/config.js';

/** Tables in a SQLite store. */
function tableCount(file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").get() as { n: number }).n;
  } finally {
    db.close();
  }
}

describe('a farm of wikis found by pattern (fake Action API)', () => {
  let farm: FakeFarm;
  let service: TestServer;
  let config: Partial<Config>;
  let file: string;
  const labels = Array.from({ length: 12 }, (_, i) => `w${i}`);
  const sys = (domain: string) => `${service.base}/${domain}/sys`;
  const putValue = async (domain: string, key: string, value: string) => {
    await request(`${sys(domain)}/key_value/kv`, { method: 'PUT', headers: admin });
    return request(`${sys(domain)}/key_value/kv/${key}`, { method: 'PUT', headers: { ...admin, 'content-type': 'text/plain' }, body: value });
  };
  const getValue = (domain: string, key: string) => request(`${sys(domain)}/key_value/kv/${key}`, { headers: admin });

  before(async () => {
    farm = await startFakeFarm(labels);
    const storage = sqliteConfig();
    file = (storage as { path: string }).path;
    config = {
      storage,
      wikis: {
        '*.farm.test': { action_api: `${farm.url}/{label}/api.php`, rest_api: `${farm.url}/{label}/rest.php` },
        // Named, it wins over the pattern, and keeps tables of its own.
        'w11.farm.test': { action_api: `${farm.url}/w11/api.php`, rest_api: `${farm.url}/w11/rest.php` },
      },
      farm: { discoveries_per_second: 1000, no_such_wiki_seconds: 600, wikis_in_memory: 4, top_wikis: 3 },
    };
    service = await startServer(config);
  });
  after(async () => {
    await service?.close();
    await farm?.close();
  });

  it('serves a wiki of the pattern from its first request, asking its site info once', async () => {
    assert.equal((await putValue('w0.farm.test', 'greeting', 'hello from w0')).status, 201);
    assert.equal((await getValue('w0.farm.test', 'greeting')).text, 'hello from w0');
    assert.equal(farm.asked.get('w0'), 1, 'one site info request, then none');
  });

  it("keeps each wiki to its own rows in the group's shared tables", async () => {
    assert.equal((await putValue('w1.farm.test', 'greeting', 'hello from w1')).status, 201);
    assert.equal((await getValue('w1.farm.test', 'greeting')).text, 'hello from w1');
    assert.equal((await getValue('w0.farm.test', 'greeting')).text, 'hello from w0');
    assert.equal((await getValue('w2.farm.test', 'greeting')).status, 404, "a wiki of the group does not see another's bucket");
  });

  it('adds no table for a wiki found later: the tables do not grow with the number of wikis', async () => {
    const before = tableCount(file);
    for (const label of labels.slice(3, 10)) assert.equal((await putValue(`${label}.farm.test`, 'k', label)).status, 201);
    assert.equal(tableCount(file), before);
    // More wikis than are kept in memory: one released is made again from what is stored, with no request.
    const asked = farm.asked.get('w3');
    assert.equal((await getValue('w3.farm.test', 'k')).text, 'w3');
    assert.equal(farm.asked.get('w3'), asked);
  });

  it('answers a domain whose wiki is no MediaWiki with 404 no-such-wiki, remembered, storing nothing', async () => {
    const before = tableCount(file);
    const first = await getValue('nowiki.farm.test', 'k');
    assert.equal(first.status, 404);
    assert.equal(first.json.type, 'urn:problem:no-such-wiki');
    assert.match(String(first.headers['content-type']), /problem\+json/);
    assert.equal((await getValue('nowiki.farm.test', 'k')).status, 404);
    assert.equal(farm.asked.get('nowiki'), 1, 'asked once, then remembered');
    assert.equal(tableCount(file), before);
  });

  it('refuses domains no pattern matches without asking anyone', async () => {
    for (const domain of ['W0.farm.test', 'a.b.farm.test', '-x.farm.test', 'farm.test', 'w0.farm.test.evil']) {
      const res = await getValue(domain, 'k');
      assert.equal(res.status, 404, domain);
      assert.equal(res.json.type, 'urn:problem:unknown-domain', domain);
    }
    assert.equal(farm.asked.get('a'), undefined);
  });

  it('looks domains never seen up at most at the configured rate', async () => {
    const limited = await startServer({ ...config, storage: sqliteConfig(), farm: { discoveries_per_second: 2, no_such_wiki_seconds: 600, wikis_in_memory: 100, top_wikis: 0 } });
    try {
      const statuses = await Promise.all(Array.from({ length: 40 }, (_, i) => getValueAt(limited, `random${i}.farm.test`).then((r) => r.status)));
      const asked = [...farm.asked.keys()].filter((k) => k.startsWith('random')).length;
      assert.ok(asked <= 3, `${asked} lookups for 40 new domains at 2/s`);
      assert.ok(statuses.every((s) => s === 404 || s === 503), String(statuses));
      assert.ok(statuses.filter((s) => s === 503).length >= 37);
    } finally {
      await limited.close();
    }
  });

  it('serves the wiki named in the config by its own entry, in tables of its own', async () => {
    assert.equal((await putValue('w11.farm.test', 'k', 'named')).status, 201);
    assert.equal((await getValue('w11.farm.test', 'k')).text, 'named');
    assert.equal(farm.asked.get('w11') ?? 0, 0, 'a wiki listed by name is not looked up');
  });

  it('after a restart, serves the wikis found before from storage, asking nothing', async () => {
    await service.close();
    const asked = farm.asked.get('w1');
    service = await startServer(config);
    assert.equal((await getValue('w1.farm.test', 'greeting')).text, 'hello from w1');
    assert.equal(farm.asked.get('w1'), asked);
    const health = (await request(`${service.base}/_health`)).json;
    assert.equal(health.farms['*.farm.test'].wikis_found, 1);
    // Opted in (farm.top_wikis: 3): the busiest wikis by name, three series at most however many wikis.
    for (let i = 0; i < 5; i++) await getValue('w1.farm.test', 'greeting');
    await getValue('w2.farm.test', 'k');
    const metrics = (await request(`${service.base}/metrics`, { headers: admin })).text;
    const busiest = [...metrics.matchAll(/^wiki_requests_busiest\{domain="([^"]+)"\} (\d+)/gm)].map((m) => [m[1], Number(m[2])]);
    assert.deepEqual(busiest[0], ['w1.farm.test', 6]);
    assert.ok(busiest.length <= 3);
    assert.doesNotMatch(metrics, /wiki_requests_total\{[^}]*domain="w1\.farm\.test"/, 'other series carry the pattern');
  });
});

function getValueAt(server: TestServer, domain: string) {
  return request(`${server.base}/${domain}/sys/key_value/kv/k`, { headers: admin });
}

describe("a farm that lists its wikis (domains_file)", () => {
  it('serves the wikis its list names and refuses others asking no one', async () => {
    const farm = await startFakeFarm(['w0', 'w1']);
    const list = path.join(tempDir(), 'wikis.txt');
    fs.writeFileSync(list, 'w0.list.test\n');
    const service = await startServer({
      storage: sqliteConfig(),
      wikis: { '*.list.test': { action_api: `${farm.url}/{label}/api.php`, rest_api: `${farm.url}/{label}/rest.php`, domains_file: list } },
    });
    try {
      const at = (domain: string) => request(`${service.base}/${domain}/sys/key_value/kv`, { method: 'PUT', headers: admin });
      assert.equal((await at('w0.list.test')).status, 201);
      const refused = await at('w1.list.test');
      assert.equal(refused.status, 404);
      assert.equal(refused.json.type, 'urn:problem:unknown-domain');
      assert.equal((await at('wikistore-group-tables.list.test')).status, 404, "the group's home serves no client");
      assert.equal(farm.asked.get('w1'), undefined);
      assert.equal(farm.asked.get('wikistore-group-tables'), undefined);
    } finally {
      await service.close();
      await farm.close();
    }
  });
});
