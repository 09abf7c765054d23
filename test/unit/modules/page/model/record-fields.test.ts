import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ARTICLE_FIELDS, checkFields, passes, selectFields } from '../../../../../src/modules/page/model/record-fields.js';
import { HttpError } from '../../../../../src/util/errors.js';

const record = {
  name: 'Toronto',
  version: { identifier: 7, editor: { name: 'A', edit_count: 3 }, size: { value: 10, unit_text: 'B' } },
  categories: [{ name: 'Category:A', url: 'u1' }, { name: 'Category:B', url: 'u2' }],
  in_language: { identifier: 'en' },
  namespace: { identifier: 0 },
};

describe("Enterprise's fields and filters", () => {
  it('keeps only the fields asked for, dotted, through arrays, with * for any', () => {
    assert.deepEqual(selectFields(record, checkFields(ARTICLE_FIELDS, ['name', 'categories.name', 'version.editor.*'])), {
      name: 'Toronto', categories: [{ name: 'Category:A' }, { name: 'Category:B' }], version: { editor: { name: 'A', edit_count: 3 } },
    });
    assert.deepEqual(selectFields(record, checkFields(ARTICLE_FIELDS, ['version.*.value'])), { version: { size: { value: 10 } } });
    assert.deepEqual(selectFields(record, []), record);
  });

  it('refuses a field the record does not have, or a path through a value', () => {
    for (const bad of ['nope', 'version.nope', 'name.first', '', 'version..identifier', 'categories.*.x']) {
      assert.throws(() => checkFields(ARTICLE_FIELDS, [bad]), (e: unknown) => e instanceof HttpError && e.status === 400, bad);
    }
  });

  it('passes a record whose field has the value (as sent, string or number), through arrays', () => {
    const filter = (field: string, value: unknown) => ({ path: checkFields(ARTICLE_FIELDS, [field])[0]!, value });
    assert.ok(passes(record, [filter('in_language.identifier', 'en'), filter('namespace.identifier', 0)]));
    assert.ok(passes(record, [filter('namespace.identifier', '0')]));
    assert.ok(passes(record, [filter('categories.name', 'Category:B')]));
    assert.ok(!passes(record, [filter('in_language.identifier', 'de')]));
    assert.ok(!passes(record, [filter('categories.name', 'Category:C')]));
  });
});
