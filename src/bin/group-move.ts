import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { SingleBar } from 'cli-progress';
import { openStorage } from '../storage/index.js';
import { moveIntoGroup, type MoveState } from '../storage/group-migration.js';
import { toolConfig, toolDomain, usageOf } from './tool.js';

const USAGE = `Copies a wiki's tables of its own into a storage group's, resumably.

  npm run group-move -- --domain DOMAIN --group NAME [--restart]

  --domain   a wiki listed by name, whose store was made with tables of its own
  --group    the storage group to move it into (a pattern's group is named by its suffix)
  --restart  start from the first table instead of where an unfinished run stopped

Run it with the service stopped (or taking no writes for the wiki): rows written to the wiki's own
tables while it runs are not copied. The wiki's own tables are left as they were. Ctrl-C stops
after the page of rows in flight; running the same command again goes on where it stopped. Once it
says it is done, set wikis.DOMAIN.storage_group: NAME and start the service.`;

const usage: (message?: string) => never = usageOf(USAGE);
const { values } = (() => {
  try {
    return parseArgs({ options: { domain: { type: 'string' }, group: { type: 'string' }, restart: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } });
  } catch (e) {
    usage((e as Error).message);
  }
})();
if (values.help) usage();
const config = toolConfig();
const domain = toolDomain(config, values.domain, usage);
const group = values.group ?? usage('--group names the storage group to move the wiki into');
if (!/^[a-z0-9][a-z0-9._-]{0,62}$/.test(group)) usage('--group must be a name of lower-case letters, digits, ".", "_" or "-"');
if (config.wikis[domain]!.storage_group !== undefined) usage(`wikis.${domain} is in storage group '${config.wikis[domain]!.storage_group}' already: remove storage_group from its entry to move it from its own tables`);

const storage = await openStorage(config.storage);
const stateFile = path.join(process.env.DATA_DIR ?? './data', `group-move-${domain}.json`);
let state: MoveState | undefined;
if (!values.restart && fs.existsSync(stateFile)) {
  const kept = JSON.parse(fs.readFileSync(stateFile, 'utf8')) as MoveState;
  if (kept.group === group) state = kept;
}
state ??= { domain, group, tables: await storage.listTables(domain), done: [], rows: 0 };
fs.mkdirSync(path.dirname(stateFile), { recursive: true });
let stopping = false;
process.on('SIGINT', () => {
  if (stopping) process.exit(130);
  stopping = true;
  console.error('\nstopping after the rows in flight; run the same command again to go on');
});
const bar = new SingleBar({ format: 'tables {value}/{total} | {table} | {rows} rows copied', hideCursor: true, stream: process.stderr });
bar.start(state.tables.length, state.done.length, { table: '', rows: state.rows });
try {
  const result = await moveIntoGroup(storage, state, {
    checkpoint: (s) => {
      fs.writeFileSync(`${stateFile}.tmp`, JSON.stringify(s));
      fs.renameSync(`${stateFile}.tmp`, stateFile);
      bar.update(s.done.length, { rows: s.rows });
    },
    progress: (table, rows) => bar.update(state!.done.length, { table, rows }),
    stopped: () => stopping,
  });
  bar.update(result.state.done.length, { table: '', rows: result.state.rows });
  bar.stop();
  if (!result.complete) {
    console.error(`stopped: ${result.state.done.length} of ${result.state.tables.length} tables done (${stateFile})`);
    process.exitCode = 130;
  } else {
    console.error(`done: ${result.state.tables.length} tables, ${result.state.rows} rows copied into group '${group}'.\nNow set wikis.${domain}.storage_group: ${group} and start the service.`);
    fs.rmSync(stateFile, { force: true });
  }
} finally {
  await storage.close();
}
