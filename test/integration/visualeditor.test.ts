import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers.js';
import { addWord, EDIT_WORD, oneLineChanged } from '../roundtrip.js';
import { WIKI_URL, WikiAdmin } from '../wiki.js';

/** Where the test wiki reads settings a test adds (scripts/wiki.sh includes it when present). */
const SERVICE_SETTINGS = path.resolve(process.env.WIKISTORE_TEST_WIKI_DIR ?? '.wiki', 'ServiceSettings.php');
const RUN = Date.now().toString(36);

/**
 * MediaWiki's own VisualEditor, pointed at the service as docs/rest-v1.md says: its api.php modules
 * read the page's HTML from the service and save through the service's transform, as a browser
 * editing in VisualEditor makes them do. On the SQLite test wiki the save's api.php request holds
 * the database's write lock while the service asks the wiki's rest.php for the transform: a
 * request that does not say it writes nothing waits on that lock until it times out.
 */
describe('VisualEditor on the real wiki, pointed at the service', () => {
  let s: TestServer;
  let wiki: WikiAdmin;
  before(async () => {
    s = await startServer({ wikis: { 'wiki.test': { action_api: `${WIKI_URL}/api.php`, rest_api: `${WIKI_URL}/rest.php` } } });
    fs.writeFileSync(SERVICE_SETTINGS, `<?php
$wgVirtualRestConfig['modules']['restbase'] = [
  'url' => '${s.base}/wiki.test/rest_v1/',
  'domain' => 'wiki.test',
  'fixedUrl' => true,
];
`);
    wiki = await new WikiAdmin().login();
  });
  after(async () => {
    fs.rmSync(SERVICE_SETTINGS, { force: true });
    await s?.close();
  });

  it('opens a page, edits a paragraph and saves it: only that paragraph changes, within seconds', async () => {
    const title = `VisualEditor page ${RUN}`;
    const text = "'''Bold''' start of a page edited in VisualEditor.\n\n{{Cite web|title=kept}} Second paragraph, untouched.\n\n== Section ==\nThird  paragraph with  odd spacing kept.\n";
    const base = await wiki.edit(title, text);
    const parse = await wiki.api({ action: 'visualeditor', paction: 'parse', page: title });
    const ve = parse.visualeditor;
    assert.equal(ve.result, 'success', JSON.stringify(parse).slice(0, 500));
    assert.equal(ve.oldid, base);
    assert.match(String(ve.etag), new RegExp(`^(W/)?"${base}/`), 'the ETag of the service\'s render');
    const edited = addWord(ve.content as string);
    assert.ok(edited, 'the first paragraph is found');
    const started = Date.now();
    const saved = await wiki.api({
      action: 'visualeditoredit', paction: 'save', page: title, oldid: String(base), etag: ve.etag, html: edited!,
      basetimestamp: ve.basetimestamp, starttimestamp: ve.starttimestamp, summary: 'VisualEditor through the service', token: wiki.csrfToken(),
    }, true);
    const seconds = (Date.now() - started) / 1000;
    assert.equal(saved.visualeditoredit?.result, 'success', JSON.stringify(saved).slice(0, 500));
    console.log(`# VisualEditor save through the service: ${seconds.toFixed(2)} s`);
    assert.ok(seconds < 30, `saved in ${seconds} s (a deadlock waits 60 s and fails)`);
    const before = await wiki.wikitext(base);
    const after = await wiki.wikitext(await wiki.latestRevid(title));
    assert.ok(oneLineChanged(before, after), `only the edited line changed:\n${after}`);
    assert.match(after.split('\n')[0]!, new RegExp(`${EDIT_WORD}$`));
  });
});
