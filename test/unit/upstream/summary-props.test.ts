import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ActionApi } from '../../../src/upstream/action-api.js';

/**
 * A wiki with Wikibase client and PageImages (Wikipedia's setup): the test wiki has neither, so
 * the Action API's answers are played by a small fake, as the wiki's documentation gives them.
 */
describe("page summary extras from the wiki's extensions", () => {
  const server = http.createServer((req, res) => {
    const q = new URL(req.url!, 'http://x').searchParams;
    const title = q.get('titles');
    let body: unknown = { query: { pages: [{ title, missing: true }] } };
    if (q.get('prop') === 'pageprops' && title === 'Bodmin') {
      body = { query: { pages: [{ title, pageprops: { 'wikibase-shortdesc': 'Town in Cornwall, England', wikibase_item: 'Q894364', page_image_free: 'Bodmin_town.jpg' } }] } };
    } else if (q.get('prop') === 'pageprops') {
      body = { query: { pages: [{ title }] } };
    } else if (q.get('prop') === 'imageinfo' && title === 'File:Bodmin_town.jpg') {
      body = { query: { pages: [{ title, imageinfo: [{ url: 'https://upload.example/Bodmin_town.jpg', width: 1200, height: 800 }] }] } };
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  let api: ActionApi;
  before(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    api = new ActionApi(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api.php`, 'wikistore-test', () => {});
  });
  after(() => server.close());

  it('reads the short description, the Wikidata item and the lead image with its original size', async () => {
    assert.deepEqual(await api.summaryProps('Bodmin'), {
      description: 'Town in Cornwall, England',
      wikibaseItem: 'Q894364',
      image: { source: 'https://upload.example/Bodmin_town.jpg', width: 1200, height: 800 },
    });
  });

  it('gives nothing for a wiki or page without them', async () => {
    assert.deepEqual(await api.summaryProps('Elsewhere'), { description: undefined, wikibaseItem: undefined, image: undefined });
  });
});
