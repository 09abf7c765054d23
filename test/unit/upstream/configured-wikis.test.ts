import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { it } from 'node:test';
import { ConfiguredWikis } from '../../../src/upstream/wikis.js';
import type { Wiki } from '../../../src/upstream/wiki.js';
import { HttpError } from '../../../src/util/errors.js';

const farm = { discoveries_per_second: 1000, no_such_wiki_seconds: 600, wikis_in_memory: 10, top_wikis: 0 };

/** Wikis whose site info says what `answer` gives for their domain, counting what was asked. */
function wikis(answer: (domain: string) => Record<string, unknown>, template = 'https://{domain}/w/api.php') {
  const asked: string[] = [];
  const directory = new ConfiguredWikis({ '*.farm.test': { action_api: template, rest_api: template.replace('api.php', 'rest.php') } }, (domain) => ({
    domain,
    siteInfo: async () => {
      asked.push(domain);
      return { general: answer(domain) };
    },
  }) as unknown as Wiki, farm);
  return { directory, asked };
}

const refusedAs = (type: string) => (e: unknown) => e instanceof HttpError && e.status === 404 && e.problemType === `urn:problem:${type}`;

it('serves a wiki of a host-chosen farm only when it says it is that host: a catch-all wiki makes no name a wiki', async () => {
  const { directory, asked } = wikis(() => ({ generator: 'MediaWiki 1.41.0', servername: 'main.farm.test' }));
  await directory.admit('main.farm.test');
  assert.equal(directory.admit('main.farm.test'), undefined, 'known from then on');
  await assert.rejects(directory.admit('random123.farm.test')!, refusedAs('no-such-wiki'));
  await assert.rejects(directory.admit('random123.farm.test')!, refusedAs('no-such-wiki'));
  assert.deepEqual(asked, ['main.farm.test', 'random123.farm.test'], 'a refusal is remembered');
});

it('takes the wiki of a path-chosen farm at its word, and refuses what is not a MediaWiki', async () => {
  const { directory } = wikis((d) => (d.startsWith('wiki') ? { generator: 'MediaWiki 1.39.0', servername: 'farm.test' } : { generator: 'Something else' }), 'https://farm.test/{label}/api.php');
  await directory.admit('wiki1.farm.test');
  await assert.rejects(directory.admit('other.farm.test')!, refusedAs('no-such-wiki'));
  await assert.rejects(directory.admit('a.b.farm.test')!, refusedAs('unknown-domain'));
});

it("serves only the wikis a farm's list names, and follows the list as it changes", async () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'farm-list-')), 'wikis.txt');
  fs.writeFileSync(file, '# the farm\nw1.farm.test\nw2.farm.test\n');
  const asked: string[] = [];
  const template = 'https://farm.test/{label}/api.php';
  const directory = new ConfiguredWikis({ '*.farm.test': { action_api: template, rest_api: template, domains_file: file } }, (domain) => ({
    domain,
    siteInfo: async () => {
      asked.push(domain);
      return { general: { generator: 'MediaWiki 1.39.0' } };
    },
  }) as unknown as Wiki, farm);
  try {
    assert.equal(directory.serves('w1.farm.test'), true);
    assert.equal(directory.serves('w3.farm.test'), false, 'not listed: not served, asked of no one');
    assert.equal(directory.serves('wikistore-group-tables.farm.test'), true, "the group's home, for its own tables");
    await assert.rejects(directory.admit('wikistore-group-tables.farm.test')!, refusedAs('unknown-domain'), 'but no client is served by it');
    await directory.admit('w1.farm.test');
    await assert.rejects(directory.admit('w3.farm.test')!, refusedAs('unknown-domain'));
    assert.deepEqual(asked, ['w1.farm.test']);
    fs.writeFileSync(file, 'w3.farm.test\n');
    (directory as unknown as { lists: Map<string, { reload(): void }> }).lists.get('*.farm.test')!.reload();
    assert.equal(directory.serves('w3.farm.test'), true, 'added to the list: served');
    assert.equal(directory.serves('w1.farm.test'), false, 'taken off the list: served no more');
  } finally {
    directory.close();
  }
});
