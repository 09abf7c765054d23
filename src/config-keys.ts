/**
 * The settings a config file may hold, to refuse a misspelt one (`listen_port`) instead of
 * silently ignoring it, naming the nearest real one.
 */
const WIKI_KEYS = ['action_api', 'rest_api', 'parsoid_domain', 'parsoid', 'maxlag', 'requests_per_second', 'timeout', 'circuit_threshold', 'circuit_probe_interval', 'notice_secret', 'storage_group', 'concurrency', 'farm_concurrency', 'domains_file'];
const STORAGE_KEYS: Record<string, string[]> = {
  sqlite: ['backend', 'path', 'read_cache_mb'],
  postgres: ['backend', 'url', 'pool_size'],
  mariadb: ['backend', 'url', 'pool_size'],
  cassandra: ['backend', 'contact_points', 'local_data_center', 'keyspace_prefix', 'replication', 'consistency'],
};
const NESTED: Record<string, string[]> = {
  listen: ['host', 'port'],
  fault_injection: ['transaction_kill'],
  farm: ['discoveries_per_second', 'no_such_wiki_seconds', 'wikis_in_memory', 'top_wikis'],
  snapshots: ['dir', 'every', 'keep', 'namespaces', 'batches'],
};

/** Edit distance, for "did you mean". */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}

function nearest(key: string, valid: string[]): string | undefined {
  const scored = valid.map((v) => ({ v, d: Math.min(distance(key, v), v.startsWith(key) || key.startsWith(v) ? 1 : Infinity) }));
  scored.sort((a, b) => a.d - b.d);
  const best = scored[0];
  return best && best.d <= Math.max(2, Math.floor(key.length / 3)) ? best.v : undefined;
}

function unknown(where: string, key: string, valid: string[]): string {
  const near = nearest(key, valid);
  return `${where}${key} is not a setting${near ? `; did you mean ${where}${near}?` : ` (${valid.join(', ')})`}`;
}

/** The first key of `parsed` that is not a setting, described for the operator; undefined if all are. */
export function unknownSetting(parsed: Record<string, unknown>, topKeys: string[]): string | undefined {
  for (const key of Object.keys(parsed)) if (!topKeys.includes(key)) return unknown('', key, topKeys);
  for (const [section, keys] of Object.entries(NESTED)) {
    const value = parsed[section];
    if (value && typeof value === 'object') for (const key of Object.keys(value)) if (!keys.includes(key)) return unknown(`${section}.`, key, keys);
  }
  const storage = parsed.storage as Record<string, unknown> | undefined;
  const storageKeys = storage && STORAGE_KEYS[String(storage.backend ?? 'sqlite')];
  if (storage && storageKeys) for (const key of Object.keys(storage)) if (!storageKeys.includes(key)) return unknown('storage.', key, storageKeys);
  const wikis = parsed.wikis as Record<string, Record<string, unknown> | null> | undefined;
  if (wikis && typeof wikis === 'object') {
    for (const [domain, wiki] of Object.entries(wikis)) {
      if (wiki && typeof wiki === 'object') for (const key of Object.keys(wiki)) if (!WIKI_KEYS.includes(key)) return unknown(`wikis.${domain}.`, key, WIKI_KEYS);
    }
  }
  return undefined;
}
