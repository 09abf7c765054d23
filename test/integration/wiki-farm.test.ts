import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { admin, request, sqliteConfig, startServer, tempDir, type TestServer } from '../helpers.js';
import { tarEntries } from '../tar-entries.js';
import { listen } from '../sse.js';
import { FAST_FOLLOWER, WIKI_URL, waitFor, WikiAdmin } from '../wiki.js';

/** The text of the farm wiki `name`'s page "Farm home", as that wiki has it now. */
async function source(name: string): Promise<string> {
  const url = `${WIKI_URL}/farm/${name}/api.php?action=query&prop=revisions&titles=Farm_home&rvprop=content&rvslots=main&format=json&formatversion=2`;
  const json = (await (await fetch(url)).json()) as { query: { pages: { revisions: { slots: { main: { content: string } } }[] }[] } };
  return json.query.pages[0]!.revisions[0]!.slots.main.content;
}

/**
 * A real farm: several wikis from one MediaWiki install (scripts/wiki.sh serves wiki {name} at
 * /farm/{name}/, each its own database), served by one service through one pattern.
 */
describe('a real MediaWiki farm through one pattern', () => {
  let service: TestServer;
  let file: string;
  const tables = () => {
    const db = new Database(file, { readonly: true });
    try {
      return (db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").get() as { n: number }).n;
    } finally {
      db.close();
    }
  };
  const html = (domain: string, title: string, headers: Record<string, string> = {}) => request(`${service.base}/${domain}/v1/page/${title}/html`, { headers });

  before(async () => {
    const storage = sqliteConfig();
    file = (storage as { path: string }).path;
    service = await startServer({
      storage,
      // One request under way to the farm at a time, for all its wikis: nothing the service asks
      // of the wiki may wait on another request to it while it holds the place.
      wikis: { '*.farm.test': { action_api: `${WIKI_URL}/farm/{label}/api.php`, rest_api: `${WIKI_URL}/farm/{label}/rest.php`, timeout: 60, farm_concurrency: 1 } },
      // The farm's wikis are followed by the group's poller alone: reads never ask the wiki again.
      ...FAST_FOLLOWER,
      follow_changes: 'stored',
      latest_check_interval: 3600,
    });
  });
  after(() => service?.close());

  it("serves each wiki's own pages, rendered by its own Parsoid, from the first request", async () => {
    for (const name of ['beta', 'gamma']) {
      const res = await html(`${name}.farm.test`, 'Farm_home');
      assert.equal(res.status, 200, res.text);
      // Rendered by that wiki (its own base), with that wiki's text of the page.
      assert.ok(res.text.includes(`<base href="${WIKI_URL}/farm/${name}/index.php/"/>`), res.text.slice(0, 600));
      assert.ok(res.text.includes(`>${await source(name)}</p>`), 'with its text of the page');
    }
    // The rest.php/v1 surface, per wiki as well: the source as that wiki has it.
    const page = await request(`${service.base}/gamma.farm.test/rest.php/v1/page/Farm_home`);
    assert.equal(page.status, 200, page.text);
    assert.equal(page.json.source, await source('gamma'));
  });

  it('serves the pages of every wiki asked at once, one request to the farm at a time', async () => {
    const run = Date.now().toString(36);
    const asked = ['alpha', 'beta', 'gamma'].flatMap((name) => ['Farm_home', `Farm_missing_${run}_1`, `Farm_missing_${run}_2`].map((title) => ({ domain: `${name}.farm.test`, title })));
    const answers = await Promise.all(asked.map(({ domain, title }) => html(domain, title)));
    assert.deepEqual(answers.map((r) => r.status), asked.map(({ title }) => (title === 'Farm_home' ? 200 : 404)), answers.map((r) => r.text.slice(0, 120)).join('\n'));
  });

  it('answers a name the farm has no wiki for with 404 no-such-wiki', async () => {
    const res = await html('zeta.farm.test', 'Farm_home');
    assert.equal(res.status, 404);
    assert.equal(res.json.type, 'urn:problem:no-such-wiki');
  });

  it("sees an edit of one wiki there and nowhere else; the farm's wikis share one set of tables", async () => {
    assert.equal((await html('alpha.farm.test', 'Farm_home')).status, 200);
    const before = tables();
    const alpha = await new WikiAdmin(`${WIKI_URL}/farm/alpha`).login();
    const text = `Alpha edited at ${Date.now()}.`;
    await alpha.edit('Farm home', text);
    const fresh = await html('alpha.farm.test', 'Farm_home', { ...admin, 'cache-control': 'no-cache' });
    assert.match(fresh.text, new RegExp(text.replace('.', '\\.')));
    const beta = await html('beta.farm.test', 'Farm_home', { ...admin, 'cache-control': 'no-cache' });
    assert.ok(beta.text.includes(`>${await source('beta')}</p>`));
    assert.doesNotMatch(beta.text, /Alpha edited/);
    // A corpus article of a wiki not read before: no table added for it.
    assert.equal((await html('beta.farm.test', '2008_British_motorcycle_Grand_Prix')).status, 200);
    assert.equal(tables(), before);
  });

  it("renders again the stored pages of a farm's wiki that use a template changed on it", async () => {
    const alpha = await new WikiAdmin(`${WIKI_URL}/farm/alpha`).login();
    const run = Date.now().toString(36);
    await alpha.edit(`Template:Farm stamp ${run}`, 'stamp one');
    await alpha.edit(`Farm templated ${run}`, `Stamped: {{Farm stamp ${run}}}.`);
    const read = () => html('alpha.farm.test', `Farm_templated_${run}`);
    assert.match((await read()).text, />stamp one</);
    await new Promise((r) => setTimeout(r, 1000));
    await alpha.edit(`Template:Farm stamp ${run}`, 'stamp two');
    // Neither the page nor a read asks the wiki: the group's poller sees the template's change.
    await waitFor('the page rendered again with the new template', 40_000, async () => (/>stamp two</.test((await read()).text) ? true : undefined));
  });

  it('writes a snapshot of every wiki of the group found so far, one folder each, each of its own wiki', async () => {
    // The wikis read above were found: the group lists them.
    const config = path.join(tempDir(), 'config.yaml');
    const storage = service.app.config.storage as { path: string };
    fs.writeFileSync(config, `storage:\n  backend: sqlite\n  path: ${JSON.stringify(storage.path)}\nwikis:\n  "*.farm.test":\n    action_api: "${WIKI_URL}/farm/{label}/api.php"\n    rest_api: "${WIKI_URL}/farm/{label}/rest.php"\nlog_level: warn\n`);
    const out = tempDir('wikistore-farm-snapshot-');
    const child = spawn(process.execPath, [path.resolve('dist/src/bin/snapshot.js'), '--group', 'farm.test', '--prefix', 'Farm_home', '--threads', '0', '--out', out], {
      env: { ...process.env, CONFIG: config }, stdio: ['ignore', 'ignore', 'pipe'],
    });
    let errors = '';
    child.stderr.on('data', (c: Buffer) => (errors += c.toString()));
    assert.equal(await new Promise((resolve) => child.once('exit', resolve)), 0, errors);
    const folders = fs.readdirSync(out).sort();
    assert.deepEqual(folders, ['alpha.farm.test', 'beta.farm.test', 'gamma.farm.test']);
    for (const folder of folders) {
      const manifest = JSON.parse(fs.readFileSync(path.join(out, folder, 'manifest.json'), 'utf8'));
      const records = (await tarEntries(path.join(out, folder, manifest.files[0].name))).flatMap((e) => e.text.split('\n').filter(Boolean).map((l) => JSON.parse(l)));
      assert.deepEqual(records.map((r) => r.name), ['Farm home']);
      assert.equal(records[0].article_body.wikitext, await source(folder.split('.')[0]!), `${folder}: its own wiki's text`);
    }
  });

  it("follows a farm's wiki by the group's poller: an edit made on the wiki is served without asking anew", async () => {
    assert.equal((await html('gamma.farm.test', 'Farm_home')).status, 200);
    // Polled once (it was just found): following starts after its newest change.
    await new Promise((r) => setTimeout(r, 1500));
    const gamma = await new WikiAdmin(`${WIKI_URL}/farm/gamma`).login();
    const text = `Gamma edited at ${Date.now()}.`;
    await gamma.edit('Farm home', text);
    await waitFor('the poller to bring the edit in', 30_000, async () => ((await html('gamma.farm.test', 'Farm_home')).text.includes(text) ? true : undefined));
    const polls = (await request(`${service.base}/metrics`, { headers: admin })).text;
    assert.match(polls, /follower_leading\{domain="\*\.farm\.test"\} 1/, 'one lease for the farm, held here');
    assert.doesNotMatch(polls, /follower_leading\{domain="gamma/, 'none per wiki');
  });
});

/** Where the farm's wikis send their notices (scripts/wiki.sh includes it in each farm wiki's settings when present). */
const FARM_NOTIFY = path.resolve(process.env.WIKISTORE_TEST_WIKI_DIR ?? '.wiki', 'FarmNotifySettings.php');
const SECRET = `farm-secret-${Date.now().toString(36)}-0123456789`;

describe("a real farm's notices: one setting for every wiki, its {domain} filled in by each", () => {
  let service: TestServer;
  before(async () => {
    service = await startServer({
      wikis: { '*.farm.test': { action_api: `${WIKI_URL}/farm/{label}/api.php`, rest_api: `${WIKI_URL}/farm/{label}/rest.php`, timeout: 60, notice_secret: SECRET } },
      // No poller, and reads never ask the wiki again: only a notice can bring an edit in.
      follow_changes: false,
      latest_check_interval: 3600,
    });
    await writeFile(FARM_NOTIFY, `<?php\n$wgWikistoreNotifyUrl = '${service.base}/{domain}/v1/changes';\n$wgWikistoreNotifySecret = '${SECRET}';\n`);
    // PHP's opcache looks at an included file again only 2 s after it last did.
    await new Promise((r) => setTimeout(r, 3100));
  });
  after(async () => {
    await rm(FARM_NOTIFY, { force: true });
    await service?.close();
  });

  it("streams the changes of every wiki of the group on one stream, each naming its wiki (scope=group)", async () => {
    const stream = listen(`${service.base}/alpha.farm.test/v1/changes?scope=group&prefix=Farm_home`);
    try {
      assert.equal((await stream.status).status, 200);
      await new Promise((r) => setTimeout(r, 300));
      for (const name of ['gamma', 'alpha']) await (await new WikiAdmin(`${WIKI_URL}/farm/${name}`).login()).edit('Farm home', `${name} streamed at ${Date.now()}.`);
      await waitFor('both edits on the group stream', 20_000, async () => (new Set(stream.events.map((e) => e.data.domain)).size >= 2 ? true : undefined));
      const edits = stream.events.filter((e) => e.event === 'edit');
      assert.deepEqual(edits.map((e) => e.data.domain), ['gamma.farm.test', 'alpha.farm.test'], 'in order, each naming its wiki');
      assert.ok(edits.every((e) => e.data.title === 'Farm_home'));
    } finally {
      stream.close();
    }
    const single = await request(`${service.base}/wiki-of-no-group.test/v1/changes?scope=group`);
    assert.equal(single.status, 404, 'a domain outside every pattern is not served');
  });

  it("serves an edit of a farm's wiki on the read right after it", async () => {
    const read = () => request(`${service.base}/beta.farm.test/v1/page/Farm_home/html`);
    assert.equal((await read()).status, 200);
    const beta = await new WikiAdmin(`${WIKI_URL}/farm/beta`).login();
    const text = `Beta noticed at ${Date.now()}.`;
    await beta.edit('Farm home', text);
    const after = await read();
    assert.ok(after.text.includes(text), after.text.slice(-300));
  });
});
