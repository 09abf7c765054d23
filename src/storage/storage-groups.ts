import { invalidInput } from './errors.js';
import { GROUP_DOMAIN } from './schema.js';
import { ForwardingStorage } from './forwarding-storage.js';
import type { TableStorage } from './table-storage.js';
import type { Delete, IndexElement, Query, QueryResult, Row, TableSchema, Write } from './types.js';

/** The storage name of a group's tables: never a domain (those start with a letter or digit). */
export const groupStore = (group: string) => `@${group}`;

/**
 * Storage groups (RESTBase's): the tables of every wiki of a group are one set of tables, the
 * wiki's domain the first part of every partition key, so the number of tables does not grow with
 * the number of wikis. Above this layer a wiki sees its own tables as before; every read, write
 * and delete is held to its own rows (the domain is set here, whatever a caller sends), and the
 * key never shows in what it reads. Domains of no group keep tables of their own, as stores made
 * before groups existed have them.
 */
export class GroupedStorage extends ForwardingStorage {
  /** Group tables defined in this process, by group, table and schema: every wiki's set-up after the first costs nothing. */
  private readonly defined = new Map<string, Promise<'created' | 'updated' | 'unchanged'>>();

  constructor(inner: TableStorage, private readonly groupOf: (domain: string) => string | undefined) {
    super(inner);
  }

  override async createTable(domain: string, name: string, rawSchema: unknown): Promise<'created' | 'updated' | 'unchanged'> {
    refuseGroupKey(rawSchema);
    const group = this.groupOf(domain);
    if (group === undefined) return this.inner.createTable(domain, name, rawSchema);
    const schema = ownDomainDropped(rawSchema, domain);
    const key = `${group}\u0000${name}\u0000${JSON.stringify(schema)}`;
    const known = this.defined.get(key);
    // For every caller after the first, the table was there already.
    if (known) return known.then(() => 'unchanged');
    const defined = this.inner.createTable(groupStore(group), name, grouped(schema));
    this.defined.set(key, defined);
    // A failure is not kept: the next wiki's set-up tries again.
    defined.catch(() => this.defined.delete(key));
    return defined;
  }

  override async getSchema(domain: string, name: string): Promise<TableSchema & { domain: string }> {
    const group = this.groupOf(domain);
    if (group === undefined) return this.inner.getSchema(domain, name);
    return { ...ungroupedSchema(await this.inner.getSchema(groupStore(group), name)), domain };
  }

  /**
   * A group's table is every wiki's of the group: one wiki cannot drop it (RESTBase kept one
   * schema per group and table too). Its rows go with a delete of each partition.
   */
  override async dropTable(domain: string, name: string): Promise<void> {
    if (this.groupOf(domain) === undefined) return this.inner.dropTable(domain, name);
    throw invalidInput(`Table '${name}' is shared by the wikis of a storage group: one wiki cannot drop it.`, 'shared-table');
  }

  /** A wiki of a group has the group's tables. */
  override listTables(domain: string): Promise<string[]> {
    const group = this.groupOf(domain);
    return this.inner.listTables(group === undefined ? domain : groupStore(group));
  }

  override async get(domain: string, query: Query): Promise<QueryResult> {
    const group = this.groupOf(domain);
    if (group === undefined) return this.inner.get(domain, query);
    const result = await this.inner.get(groupStore(group), { ...query, attributes: { ...query.attributes, [GROUP_DOMAIN]: domain } });
    return { ...result, items: result.items.map(withoutGroupKey) };
  }

  override put(domain: string, write: Write): Promise<void> {
    const group = this.groupOf(domain);
    if (group === undefined) return this.inner.put(domain, write);
    return this.inner.put(groupStore(group), { ...write, attributes: { ...write.attributes, [GROUP_DOMAIN]: domain } });
  }

  override delete(domain: string, del: Delete): Promise<void> {
    const group = this.groupOf(domain);
    if (group === undefined) return this.inner.delete(domain, del);
    return this.inner.delete(groupStore(group), { ...del, attributes: { ...del.attributes, [GROUP_DOMAIN]: domain } });
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The group key is the storage layer's: a client's schema may not name it. */
function refuseGroupKey(raw: unknown): void {
  if (isObject(raw) && isObject(raw.attributes) && Object.hasOwn(raw.attributes, GROUP_DOMAIN)) {
    throw invalidInput(`attribute name '${GROUP_DOMAIN}' is reserved by the storage layer`);
  }
}

/** A schema read back names its wiki: the group's table is that wiki's, another's is refused as elsewhere. */
function ownDomainDropped(raw: unknown, domain: string): unknown {
  if (!isObject(raw) || raw.domain === undefined) return raw;
  if (raw.domain !== domain) throw invalidInput(`'domain' is ${JSON.stringify(raw.domain)} but the table is in '${domain}'`, 'invalid-schema');
  const { domain: _domain, ...rest } = raw;
  return rest;
}

const DOMAIN_KEY: IndexElement = { attribute: GROUP_DOMAIN, type: 'hash' };

/** A client's schema as a group's table: the domain first in the primary key and in every index. */
function grouped(raw: unknown): unknown {
  if (!isObject(raw) || !isObject(raw.attributes) || !Array.isArray(raw.index)) return raw;
  const indexes = isObject(raw.secondaryIndexes)
    ? Object.fromEntries(Object.entries(raw.secondaryIndexes).map(([name, elements]) => [name, Array.isArray(elements) ? [DOMAIN_KEY, ...elements] : elements]))
    : raw.secondaryIndexes;
  return {
    ...raw,
    attributes: { [GROUP_DOMAIN]: 'string', ...raw.attributes },
    index: [DOMAIN_KEY, ...raw.index],
    ...(indexes === undefined ? {} : { secondaryIndexes: indexes }),
  };
}

const notGroupKey = (element: IndexElement) => element.attribute !== GROUP_DOMAIN;

function withoutGroupKey(row: Row): Row {
  if (!Object.hasOwn(row, GROUP_DOMAIN)) return row;
  const { [GROUP_DOMAIN]: _domain, ...rest } = row;
  return rest;
}

/** A group table's schema as its wiki reads it: as it was given, without the group key. */
function ungroupedSchema<T extends TableSchema>(schema: T): T {
  const { [GROUP_DOMAIN]: _type, ...attributes } = schema.attributes;
  const given = schema.given && isObject(schema.given.attributes)
    ? ungroupedGiven(schema.given)
    : schema.given;
  return {
    ...schema,
    attributes,
    index: schema.index.filter(notGroupKey),
    secondaryIndexes: Object.fromEntries(Object.entries(schema.secondaryIndexes).map(([name, elements]) => [name, elements.filter(notGroupKey)])),
    ...(given === undefined ? {} : { given }),
  };
}

function ungroupedGiven(given: Record<string, unknown>): Record<string, unknown> {
  const { [GROUP_DOMAIN]: _type, ...attributes } = given.attributes as Record<string, unknown>;
  const strip = (elements: unknown) => (Array.isArray(elements) ? elements.filter((e) => !(isObject(e) && e.attribute === GROUP_DOMAIN)) : elements);
  return {
    ...given,
    attributes,
    ...(Array.isArray(given.index) ? { index: strip(given.index) } : {}),
    ...(isObject(given.secondaryIndexes) ? { secondaryIndexes: Object.fromEntries(Object.entries(given.secondaryIndexes).map(([n, e]) => [n, strip(e)])) } : {}),
  };
}
