import { createHash } from 'node:crypto';
import type { IndexElement } from '../types.js';

/** Physical names of a logical table; derived from a hash so no client text reaches SQL identifiers. */
export interface PhysicalNames {
  main: string;
  statics: string;
  expiry: string;
  index(name: string, elements: IndexElement[]): string;
}

const short = (text: string, length: number) => createHash('sha1').update(text).digest('hex').slice(0, length);

export function physicalNames(domain: string, table: string): PhysicalNames {
  const base = `t_${short(`${domain}\u0000${table}`, 20)}`;
  return {
    main: base,
    statics: `${base}_s`,
    expiry: `${base}_exp`,
    index: (name, elements) => `${base}_i_${short(`${name}\u0000${JSON.stringify(elements)}`, 10)}`,
  };
}

/** Column names are validated against a strict pattern before they get here. */
export const q = (identifier: string) => `"${identifier}"`;

export const META_TABLE = 'wikistore_tables';
/** One row: a number every create, migrate and drop moves, so other processes know to reload definitions. */
export const SCHEMA_EPOCH_TABLE = 'wikistore_schema_epoch';
