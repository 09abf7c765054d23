import { HttpError } from '../../../util/errors.js';

/** A tree of field names: a leaf is `true`, an object (or an array's items) its own tree. */
type FieldTree = { [name: string]: FieldTree | true };

const NAME_URL: FieldTree = { name: true, url: true };
const EDITOR: FieldTree = {
  identifier: true, name: true, is_anonymous: true, edit_count: true, groups: true, is_bot: true, is_admin: true, is_patroller: true, has_advanced_rights: true, date_started: true,
};
const IMAGE: FieldTree = { content_url: true, width: true, height: true, alternative_text: true, caption: true };

/** Every field of an article record in Wikimedia Enterprise's data dictionary (those this service leaves empty too: they may be asked for). */
export const ARTICLE_FIELDS: FieldTree = {
  name: true, identifier: true, abstract: true, description: true, url: true, watchers_count: true,
  date_created: true, date_modified: true, date_previously_modified: true,
  version: { identifier: true, comment: true, tags: true, is_minor_edit: true, is_flagged_stable: true, noindex: true, editor: EDITOR, number_of_characters: true, size: { value: true, unit_text: true }, scores: true, maintenance_tags: true },
  previous_version: { identifier: true, number_of_characters: true },
  namespace: { identifier: true, name: true, description: true },
  in_language: { identifier: true, name: true },
  main_entity: { identifier: true, url: true },
  additional_entities: { identifier: true, url: true, aspects: true },
  is_part_of: { identifier: true, url: true, name: true, code: true },
  categories: NAME_URL, templates: NAME_URL, redirects: NAME_URL,
  protection: { type: true, level: true, expiry: true },
  image: IMAGE,
  license: { name: true, identifier: true, url: true },
  visibility: { text: true, editor: true, comment: true },
  event: { identifier: true, type: true, date_created: true, date_published: true, partition: true, offset: true },
  article_body: { html: true, wikitext: true },
};

const PART: FieldTree = { type: true, name: true, value: true, values: true, links: { url: true, text: true }, images: IMAGE, has_parts: true };
/** The fields of a structured-contents record. */
export const STRUCTURED_FIELDS: FieldTree = {
  ...Object.fromEntries(['name', 'identifier', 'abstract', 'description', 'url', 'date_created', 'date_modified', 'version', 'is_part_of', 'in_language', 'license', 'image', 'main_entity'].map((k) => [k, ARTICLE_FIELDS[k]!])),
  main_image: IMAGE, infoboxes: PART, sections: PART, references: { identifier: true, group: true, text: { value: true, links: { url: true, text: true } } },
};

/** Fields of a snapshot's description. */
export const SNAPSHOT_FIELDS: FieldTree = {
  identifier: true, version: true, date_modified: true, is_part_of: { identifier: true }, in_language: { identifier: true }, namespace: { identifier: true }, size: { value: true, unit_text: true }, chunks: true,
};

/** Enterprise's own error: `{status, message}`. */
const unknownField = (kind: string, field: string) => new HttpError(400, 'invalid-field', `${kind} ${field.slice(0, 200)} is not a field of this record.`);

/** Whether a dotted path (with `*` wildcards) names fields the tree has. */
function known(tree: FieldTree, path: string[]): boolean {
  if (!path.length) return true;
  const [head, ...rest] = path;
  if (head === '*') return Object.values(tree).some((sub) => sub === true ? rest.length === 0 : known(sub, rest));
  const sub = Object.hasOwn(tree, head!) ? tree[head!] : undefined;
  if (sub === undefined) return false;
  return sub === true ? rest.length === 0 : known(sub, rest);
}

/** The fields asked for, checked: a 400 naming the first one the record has not. */
export function checkFields(tree: FieldTree, fields: string[], kind = 'field'): string[][] {
  return fields.map((field) => {
    const path = field.split('.');
    if (!field || path.some((p) => !p) || !known(tree, path)) throw unknownField(kind, field);
    return path;
  });
}

/** What of `value` the paths select: each path's fields kept, through arrays, the rest left out. */
export function selectFields(value: unknown, paths: string[][]): unknown {
  if (!paths.length) return value;
  return selected(value, paths) ?? {};
}

/** The selection, or undefined where nothing the paths name is there (a value they would go through). */
function selected(value: unknown, paths: string[][]): unknown {
  if (paths.some((p) => !p.length)) return value;
  if (Array.isArray(value)) return value.map((item) => selected(item, paths)).filter((item) => item !== undefined);
  if (typeof value !== 'object' || value === null) return undefined;
  const out: Record<string, unknown> = {};
  for (const [key, sub] of Object.entries(value)) {
    const below = paths.filter((p) => p[0] === key || p[0] === '*').map((p) => p.slice(1));
    if (!below.length) continue;
    const kept = selected(sub, below);
    if (kept !== undefined) out[key] = kept;
  }
  return Object.keys(out).length ? out : undefined;
}

/** A field's values in a record (through arrays), for a filter. */
function valuesAt(value: unknown, path: string[]): unknown[] {
  if (Array.isArray(value)) return value.flatMap((item) => valuesAt(item, path));
  if (!path.length) return [value];
  if (typeof value !== 'object' || value === null) return [];
  const [head, ...rest] = path;
  return head === '*' ? Object.values(value).flatMap((v) => valuesAt(v, rest)) : valuesAt((value as Record<string, unknown>)[head!], rest);
}

export interface Filter {
  field: string;
  value: unknown;
}

/** Whether a record passes every filter: the field has the value (as a string or number, as sent). */
export function passes(record: unknown, filters: { path: string[]; value: unknown }[]): boolean {
  return filters.every(({ path, value }) => valuesAt(record, path).some((v) => v === value || String(v) === String(value)));
}
