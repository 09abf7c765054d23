import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { tempDir } from '../helpers.js';

describe('configuration', () => {
  const file = (yaml: string) => {
    const p = path.join(tempDir(), 'config.yaml');
    fs.writeFileSync(p, yaml);
    return p;
  };

  it('has defaults that work without a file: loopback, SQLite under DATA_DIR, en.wikipedia.org', () => {
    const config = loadConfig({ CONFIG: file('# only a comment\n'), DATA_DIR: '/srv/data' });
    assert.deepEqual(config.listen, { host: '127.0.0.1', port: 7231 });
    assert.deepEqual(config.storage, { backend: 'sqlite', path: '/srv/data/wikistore.sqlite3' });
    assert.equal(config.wikis['en.wikipedia.org']?.action_api, 'https://en.wikipedia.org/w/api.php');
    // What Wikimedia serves publicly, asked as it asks to be.
    assert.equal(config.wikis['en.wikipedia.org']?.parsoid, 'core');
    assert.equal(config.wikis['en.wikipedia.org']?.maxlag, 5);
    assert.ok((config.wikis['en.wikipedia.org']?.requests_per_second ?? 0) > 0);
    assert.match(config.user_agent, /wikistore/);
    assert.equal(config.admin_token, undefined);
  });

  it('takes wikis by pattern with templates, and refuses what a pattern cannot be', () => {
    const farm = 'wikis:\n  "*.farm.example":\n    action_api: "https://{domain}/w/api.php"\n    rest_api: "https://farm.example/{label}/rest.php"\n';
    const config = loadConfig({ CONFIG: file(`${farm}farm:\n  discoveries_per_second: 2\n`) });
    assert.equal(config.wikis['*.farm.example']?.rest_api, 'https://farm.example/{label}/rest.php');
    assert.deepEqual(config.farm, { discoveries_per_second: 2, no_such_wiki_seconds: 600, wikis_in_memory: 1000, top_wikis: 0 });
    const refused: [string, RegExp][] = [
      ['wikis:\n  "*.*.example":\n    action_api: a\n    rest_api: b\n', /not a domain name, nor a pattern/],
      ['wikis:\n  "a*.example":\n    action_api: a\n    rest_api: b\n', /not a domain name, nor a pattern/],
      ['wikis:\n  wiki.example:\n    action_api: "https://{label}.x/api.php"\n    rest_api: b\n', /\{label\} is not a placeholder here/],
      ['wikis:\n  "*.x.example":\n    action_api: "https://{host}/api.php"\n    rest_api: b\n', /\{host\} is not a placeholder here/],
      [`${farm}    storage_group: "Bad Name"\n`, /storage_group must be a name/],
      [`${farm}farm:\n  discoveries_per_second: 0\n`, /farm.discoveries_per_second must be a positive number/],
      [`${farm}farm:\n  discoveries: 1\n`, /farm.discoveries is not a setting/],
      [`${farm}    farm_concurrency: 0\n`, /farm_concurrency must be a whole number, at least 1, in a pattern's entry/],
      ['wikis:\n  wiki.example:\n    action_api: a\n    rest_api: b\n    farm_concurrency: 4\n', /farm_concurrency must be .* in a pattern's entry/],
    ];
    assert.equal(loadConfig({ CONFIG: file(`${farm}    farm_concurrency: 16\n`) }).wikis['*.farm.example']?.farm_concurrency, 16);
    for (const [yaml, message] of refused) assert.throws(() => loadConfig({ CONFIG: file(yaml) }), message, yaml);
  });

  it('reads the YAML file, then lets the environment override it', () => {
    const config = loadConfig({
      CONFIG: file('listen:\n  port: 9000\nstorage:\n  backend: postgres\n  url: postgres://x@127.0.0.1/db\nadmin_token: from-file\n'),
      PORT: '9100',
      HOST: '0.0.0.0',
      ADMIN_TOKEN: 'from-env',
    });
    assert.deepEqual(config.listen, { host: '0.0.0.0', port: 9100 });
    assert.equal(config.storage.backend, 'postgres');
    assert.equal(config.admin_token, 'from-env');
  });

  it('makes asking the wiki on reads a safety net once the follower is on, unless set', () => {
    const defaults = loadConfig({ CONFIG: file('# defaults\n') });
    assert.equal(defaults.latest_check_interval, 60);
    assert.equal(defaults.follow_changes, 'stored', 'what is stored is kept fresh by following, by default');
    assert.equal(loadConfig({ CONFIG: file('follow_changes: stored\n') }).latest_check_interval, 60, 're-checks stay the safety net of a stored-only follower');
    const following = loadConfig({ CONFIG: file('follow_changes: true\nfollower:\n  lease: 3\n') });
    assert.equal(following.latest_check_interval, 3600);
    assert.equal(following.follower.lease, 3);
    assert.equal(following.follower.batch_size, 100, 'the other follower settings keep their defaults');
    assert.equal(loadConfig({ CONFIG: file('follow_changes: true\nlatest_check_interval: 30\n') }).latest_check_interval, 30);
    assert.throws(() => loadConfig({ CONFIG: file('follower:\n  leese: 3\n') }), /follower.leese is not a setting/);
    assert.throws(() => loadConfig({ CONFIG: file('follower:\n  lease: 0\n') }), /follower.lease must be a positive number/);
    assert.throws(() => loadConfig({ CONFIG: file('follow_changes: yes please\n') }), /follow_changes/);
  });

  it('rejects invalid values with a message naming them', () => {
    assert.throws(() => loadConfig({ CONFIG: file('storage:\n  backend: mongodb\n') }), /storage.backend/);
    assert.throws(() => loadConfig({ CONFIG: file('storage:\n  backend: cassandra\n  consistency:\n    read: most\n') }), /storage.consistency.read/);
    assert.throws(() => loadConfig({ CONFIG: file('storage:\n  backend: sqlite\n  path: x.db\n  read_cache_mb: lots\n') }), /storage.read_cache_mb/);
    assert.throws(() => loadConfig({ CONFIG: file('storage:\n  backend: cassandra\n  replication:\n    dc1: 0\n') }), /storage.replication/);
    assert.throws(() => loadConfig({ CONFIG: file('storage:\n  backend: cassandra\n  keyspace_prefix: "x; DROP"\n') }), /keyspace_prefix/);
    assert.throws(() => loadConfig({ CONFIG: file('listen:\n  port: 99999\n') }), /listen.port/);
    assert.throws(() => loadConfig({ CONFIG: file('wikis:\n  "bad domain!":\n    action_api: x\n    rest_api: y\n') }), /not a domain/);
    assert.throws(() => loadConfig({ CONFIG: file('latest_check_interval: soon\n') }), /latest_check_interval/);
    const wiki = (extra: string) => file(`wikis:\n  w.example:\n    action_api: x\n    rest_api: y\n${extra}`);
    assert.throws(() => loadConfig({ CONFIG: wiki('    parsoid: v4\n') }), /parsoid must be v3, core or auto/);
    assert.throws(() => loadConfig({ CONFIG: wiki('    maxlag: -1\n') }), /maxlag/);
    assert.throws(() => loadConfig({ CONFIG: wiki('    requests_per_second: 0\n') }), /requests_per_second/);
    assert.throws(() => loadConfig({ CONFIG: wiki('    timeout: 0\n') }), /timeout/);
    assert.throws(() => loadConfig({ CONFIG: wiki('    circuit_threshold: 0.5\n') }), /circuit_threshold/);
    assert.throws(() => loadConfig({ CONFIG: wiki('    circuit_probe_interval: never\n') }), /circuit_probe_interval/);
    assert.throws(() => loadConfig({ CONFIG: file('headers_timeout: 0\n') }), /headers_timeout/);
    assert.throws(() => loadConfig({ CONFIG: file('headers_timeout: 30\nrequest_timeout: 10\n') }), /request_timeout/);
    assert.throws(() => loadConfig({ CONFIG: file('max_connections: 100000000\n') }), /max_connections/);
    assert.throws(() => loadConfig({ CONFIG: file('workers: -1\n') }), /workers/);
    assert.throws(() => loadConfig({ CONFIG: file('negative_cache_ms: -5\n') }), /negative_cache_ms/);
    assert.throws(() => loadConfig({ CONFIG: file('branch_ttl: 0\n') }), /branch_ttl/);
    assert.throws(() => loadConfig({ CONFIG: file('branch_sweep_interval: -1\n') }), /branch_sweep_interval/);
    assert.throws(() => loadConfig({ CONFIG: file('snapshot_bodies: always\n') }), /snapshot_bodies must be render or snapshot/);
  });

  it('bounds connections by the descriptor limit, and takes WORKERS from the environment', () => {
    const config = loadConfig({ CONFIG: file('\n'), WORKERS: '0' });
    assert.equal(config.workers, 0);
    assert.ok(config.max_connections >= 64 && config.max_connections <= 10_000);
    assert.ok(config.headers_timeout <= config.request_timeout);
  });
});
