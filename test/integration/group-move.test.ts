import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openStorage } from '../../src/storage/index.js';
import { moveIntoGroup, type MoveState } from '../../src/storage/group-migration.js';
import { groupStore } from '../../src/storage/storage-groups.js';
import { admin, BACKENDS, freshDomain, request, startServer } from '../helpers.js';

/**
 * A store written with a wiki's tables of its own (as every store made before storage groups),
 * moved into a group by the move the `group-move` command runs, stopped half way and resumed,
 * then served from the group: nothing lost.
 */
for (const backend of BACKENDS) {
  describe(`moving a wiki's tables into a storage group: ${backend.name}`, () => {
    it('copies every table and row, resumes where it stopped, and the wiki is served from the group after', async () => {
      const storageConfig = backend.storage();
      const domain = freshDomain();
      const group = `moved${Date.now().toString(36)}`;
      const wiki = { action_api: 'http://127.0.0.1:1/api.php', rest_api: 'http://127.0.0.1:1/rest.php' };
      const values = Array.from({ length: 1200 }, (_, i) => `value ${i}`);
      // Written by the service as it was: the wiki listed by name, tables of its own.
      let service = await startServer({ storage: storageConfig, wikis: { [domain]: wiki } });
      const kv = `${service.base}/${domain}/sys/key_value/kv`;
      assert.equal((await request(kv, { method: 'PUT', headers: admin })).status, 201);
      for (let i = 0; i < values.length; i += 50) {
        await Promise.all(values.slice(i, i + 50).map((v, j) => request(`${kv}/k${i + j}`, { method: 'PUT', headers: { ...admin, 'content-type': 'text/plain' }, body: v })));
      }
      await service.close();

      const storage = await openStorage(storageConfig);
      try {
        const tables = await storage.listTables(domain);
        assert.ok(tables.includes('key_value.kv') && tables.includes('page_revisions'), tables.join(', '));
        let kept: MoveState | undefined;
        let pages = 0;
        const first = await moveIntoGroup(storage, { domain, group, tables, done: [], rows: 0 }, {
          checkpoint: (s) => (kept = JSON.parse(JSON.stringify(s))),
          progress: () => pages++,
          stopped: () => pages >= 1 && kept?.current?.table === 'key_value.kv',
        });
        assert.equal(first.complete, false, 'stopped half way through the bucket');
        assert.ok(kept!.current?.next, 'with where it stopped');
        const second = await moveIntoGroup(storage, kept!, { checkpoint: (s) => (kept = s), progress: () => {}, stopped: () => false });
        assert.equal(second.complete, true);
        assert.deepEqual([...second.state.done].sort(), [...tables].sort());
        assert.deepEqual(await storage.listTables(groupStore(group)), tables);
      } finally {
        await storage.close();
      }

      // Served from the group now: every value, and the wiki's own tables left as they were.
      service = await startServer({ storage: storageConfig, wikis: { [domain]: { ...wiki, storage_group: group } } });
      try {
        for (let i = 0; i < values.length; i += 100) {
          const res = await request(`${service.base}/${domain}/sys/key_value/kv/k${i}`, { headers: admin });
          assert.equal(res.text, values[i]);
        }
        const last = await request(`${service.base}/${domain}/sys/key_value/kv/k${values.length - 1}`, { headers: admin });
        assert.equal(last.text, values.at(-1));
      } finally {
        await service.close();
      }
    });
  });
}
