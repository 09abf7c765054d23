import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { enterpriseRecord } from '../../../../../src/modules/page/snapshot/enterprise.js';
import type { RevisionRow } from '../../../../../src/modules/page/model/revision.js';
import type { WikiFacts } from '../../../../../src/modules/page/model/wiki-facts.js';
import type { PageFacts } from '../../../../../src/upstream/page-facts.js';

const row = { title: 'Mont_Blanc', rev: 12, page_id: 3, timestamp: '2026-01-01T00:00:00Z', user_id: 9, user_text: 'Ed', parent_id: 11 } as RevisionRow;

const wiki = (server: string, articlePath = '/wiki/$1'): WikiFacts => ({ id: 'wiki', server, articlePath, language: 'en', license: { name: '', url: '' } });

const facts = (groups: string[], rights: string[] = []): PageFacts => ({
  rev: 12, latest: 12, asked: '2026-01-01T00:00:00Z',
  categories: [{ name: 'Category:Alps', hidden: false }],
  templates: ['Template:Infobox mountain', 'Template:Cite web'],
  redirects: ['Monte Bianco'],
  protection: [],
  editor: { editCount: 5, groups, rights },
});

type Named = { name: string; url: string }[];
const recordOf = (w: WikiFacts, page: PageFacts) => enterpriseRecord(row, 'Mont Blanc', 0, w, null, 10, '2026-02-01T00:00:00Z', { page });

describe('Enterprise records', () => {
  it('name the pages a record lists with the URLs of its own wiki, however many wikis named the same page before', () => {
    // Named in turn by wikis of one farm (one server, paths of their own) and of two servers.
    const wikis = [wiki('https://a.example'), wiki('https://b.example'), wiki('https://a.example', '/w/index.php?title=$1'), wiki('https://a.example')];
    for (let round = 0; round < 2; round++) {
      for (const w of wikis) {
        const record = recordOf(w, facts(['user']));
        const expected = (name: string) => `${w.server}${w.articlePath.replace('$1', name.replace(/ /g, '_'))}`;
        assert.deepEqual(record.templates, [
          { name: 'Template:Infobox mountain', url: expected('Template:Infobox_mountain') },
          { name: 'Template:Cite web', url: expected('Template:Cite_web') },
        ]);
        assert.deepEqual(record.categories, [{ name: 'Category:Alps', url: expected('Category:Alps') }]);
        assert.deepEqual((record.redirects as Named)[0]!.url, expected('Monte_Bianco'));
      }
    }
  });

  it('say what the editor\'s groups and rights make of them, in the data dictionary\'s order', () => {
    const editorOf = (page: PageFacts) => (recordOf(wiki('https://a.example'), page).version as { editor: Record<string, unknown> }).editor;
    const plain = editorOf(facts(['*', 'user', 'autoconfirmed']));
    assert.deepEqual(Object.keys(plain), ['identifier', 'name', 'is_anonymous', 'edit_count', 'groups', 'is_bot', 'is_admin', 'is_patroller', 'has_advanced_rights']);
    assert.deepEqual([plain.is_bot, plain.is_admin, plain.is_patroller, plain.has_advanced_rights], [false, false, false, false]);
    const steward = editorOf(facts(['user', 'bot', 'sysop', 'steward'], ['patrol']));
    assert.deepEqual([steward.is_bot, steward.is_admin, steward.is_patroller, steward.has_advanced_rights], [true, true, true, true]);
    assert.equal(editorOf({ ...facts(['user', 'patroller']), editor: { editCount: 1, groups: ['user', 'patroller'], rights: [], registration: '2001-01-15T00:00:00Z' } }).date_started, '2001-01-15T00:00:00Z');
    // Facts of another revision say nothing of this one's editor.
    assert.deepEqual(Object.keys(editorOf({ ...facts(['sysop']), rev: 11 })), ['identifier', 'name', 'is_anonymous']);
  });
});
