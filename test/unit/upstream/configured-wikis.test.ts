import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ConfiguredWikis } from '../../../src/upstream/wikis.js';
import type { Wiki } from '../../../src/upstream/wiki.js';
import { HttpError } from '../../../src/util/errors.js';

const farm = { discoveries_per_second: 1000, no_such_wiki_seconds: 600, wikis_in_memory: 10 };

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
