/**
 * The shape of src/, checked by `npm test` (scripts/test.sh): no import cycles, and imports point
 * down the layers (docs/architecture.md, its Layout section):
 *   entry points (bin/: main, serve, supervisor, startup, backfill, snapshot, tool) and app.ts
 *   surfaces/ (the public API faces: rest_v1, rest.php/v1, the /v1/ list) → modules only through
 *     their doors (modules/page/door.ts)
 *   modules/* (each alone)   upstream/ (the wikis)   table-access/ (modules' handles on tables)
 *   http/ (the server)  →  router/ (dispatch, validation, the surface contract)  →  storage/  →  util/ and config
 * Every folder of src/ is named by a rule's `from` (test/unit/layering.test.ts checks it).
 */
const ENTRY = '^src/(bin/[^/]+|app)\\.ts$';

/** The page module's top: its composition, its door and the bag it hands on. */
const TOP = 'index\\.ts$|door\\.ts$|page-api\\.ts$';

/** Files of the page module's `folder` import nothing the pattern (relative to the module) names. */
function pageLayer(name, folder, forbidden) {
  return {
    name, severity: 'error', comment: `page/${folder}/ imports only the page folders below it.`,
    from: { path: `^src/modules/page/${folder}/` }, to: { path: `^src/modules/page/(${forbidden})` },
  };
}

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'Import cycles make the start-up order and the layers unreadable.', from: {}, to: { circular: true } },
    { name: 'entry-points-on-top', severity: 'error', comment: 'Only entry points import entry points.', from: { pathNot: ENTRY }, to: { path: ENTRY } },
    {
      name: 'storage-below-everything', severity: 'error', comment: 'Storage knows nothing of HTTP, routing, modules or the wikis.',
      from: { path: '^src/storage/' }, to: { path: '^src/(http|router|modules|upstream|table-access)/' },
    },
    {
      name: 'router-below-http', severity: 'error', comment: 'Routing dispatches; the HTTP server and the modules sit on it.',
      from: { path: '^src/router/' }, to: { path: '^src/(http|modules|upstream|table-access)/' },
    },
    {
      name: 'http-below-modules', severity: 'error', comment: 'The HTTP layer serves any module and names none.',
      from: { path: '^src/http/' }, to: { path: '^src/(modules|upstream|table-access)/' },
    },
    {
      name: 'upstream-below-modules', severity: 'error', comment: 'Clients of the wikis know nothing of the modules that use them.',
      from: { path: '^src/upstream/' }, to: { path: '^src/(modules|table-access)/' },
    },
    {
      name: 'table-access-below-modules', severity: 'error', comment: "Modules' handles on tables know no module.",
      from: { path: '^src/table-access/' }, to: { path: '^src/(modules|upstream)/' },
    },
    {
      name: 'modules-apart', severity: 'error', comment: 'A module talks to another through internal requests, never by import.',
      from: { path: '^src/modules/([^/]+)/' }, to: { path: '^src/modules/', pathNot: '^src/modules/$1/' },
    },
    {
      name: 'surfaces-through-doors', severity: 'error', comment: 'A surface uses a module only through its door (modules/page/door.ts), never the HTTP front.',
      from: { path: '^src/surfaces/' }, to: { path: '^src/(modules/|http/|bin/|app\\.ts$)', pathNot: '^src/modules/page/door\\.ts$' },
    },
    {
      name: 'surfaces-above-modules', severity: 'error', comment: 'Only the app registers surfaces; no module, router or front knows one.',
      from: { path: '^src/', pathNot: '^src/(surfaces/|app\\.ts$)' }, to: { path: '^src/surfaces/' },
    },
    {
      name: 'surfaces-apart', severity: 'error', comment: 'Each surface in a folder of its own: they share only the list (surfaces/index.ts) and the door.',
      from: { path: '^src/surfaces/([^/]+)/' }, to: { path: '^src/surfaces/', pathNot: '^src/surfaces/$1/' },
    },
    {
      name: 'util-at-the-bottom', severity: 'error', comment: 'util/ holds pure helpers: it imports nothing else of src/.',
      from: { path: '^src/util/' }, to: { path: '^src/', pathNot: '^src/util/' },
    },
    {
      name: 'config-near-the-bottom', severity: 'error', comment: 'Reading the config needs util/ alone.',
      from: { path: '^src/config(-keys)?\\.ts$' }, to: { path: '^src/', pathNot: '^src/(util/|config(-keys)?\\.ts$)' },
    },
    {
      name: 'types-declare-only', severity: 'error', comment: 'types/ declares the types of packages that ship none; it imports nothing of src/.',
      from: { path: '^src/types/' }, to: { path: '^src/' },
    },
    {
      name: 'storage-engines-apart', severity: 'error', comment: 'An engine is a folder of its own (a dialect and a driver, or Cassandra): none imports another.',
      from: { path: '^src/storage/(sqlite|postgres|mariadb|cassandra)/' }, to: { path: '^src/storage/(sqlite|postgres|mariadb|cassandra)/', pathNot: '^src/storage/$1/' },
    },
    {
      name: 'storage-sql-knows-no-engine', severity: 'error', comment: 'The shared SQL code speaks to an engine through its dialect and driver interfaces.',
      from: { path: '^src/storage/sql/' }, to: { path: '^src/storage/(sqlite|postgres|mariadb|cassandra)/' },
    },
    // Inside the page module, folders in layers (docs/architecture.md): model/ (types, pure
    // helpers) < tables/ (one class per table) < read/ < display/ and snapshot/ < edit/ and follow/
    // < drafts/ (branches, on edit/) < v1/ (routes) < door.ts (what surfaces may use) and index.ts
    // (the composition). thread/ (the worker threads: model/'s and snapshot/'s CPU work) sits on
    // snapshot/ and is handed to the layers that use it by the composition; none imports it.
    // enterprise/ (Enterprise's records and snapshots on offer) sits on snapshot/, for the door.
    pageLayer('page-model-at-the-bottom', 'model', `(enterprise|tables|read|display|snapshot|edit|follow|drafts|v1|thread)/|${TOP}`),
    pageLayer('page-tables-above-model', 'tables', `(enterprise|read|display|snapshot|edit|follow|drafts|v1|thread)/|${TOP}`),
    pageLayer('page-read-below-edit-and-follow', 'read', `(enterprise|display|snapshot|edit|follow|drafts|v1|thread)/|${TOP}`),
    pageLayer('page-display-above-read', 'display', `(enterprise|snapshot|edit|follow|drafts|v1|thread)/|${TOP}`),
    pageLayer('page-snapshot-above-read', 'snapshot', `(enterprise|display|edit|follow|drafts|v1|thread)/|${TOP}`),
    pageLayer('page-edit-beside-follow', 'edit', `(enterprise|snapshot|follow|drafts|v1|thread)/|${TOP}`),
    pageLayer('page-follow-beside-edit', 'follow', `(enterprise|snapshot|edit|drafts|v1|thread)/|${TOP}`),
    pageLayer('page-drafts-above-edit', 'drafts', `(enterprise|snapshot|follow|v1|thread)/|${TOP}`),
    pageLayer('page-thread-on-snapshot', 'thread', `(enterprise|display|edit|follow|drafts|v1)/|${TOP}`),
    pageLayer('page-enterprise-on-snapshot', 'enterprise', `(display|edit|follow|drafts|v1|thread)/|${TOP}`),
    pageLayer('page-v1-routes-on-the-layers-below', 'v1', `(enterprise|snapshot|follow|drafts|thread)/|${TOP}`),
    {
      name: 'page-door-below-the-composition', severity: 'error', comment: 'The door shows parts of the page module; it does not compose them.',
      from: { path: '^src/modules/page/door\\.ts$' }, to: { path: '^src/modules/page/index\\.ts$' },
    },
    {
      name: 'bin-entry-points', severity: 'error', comment: 'An entry point starts the app or a tool; it is imported by no module.',
      from: { path: '^src/bin/' }, to: { path: '^src/surfaces/' },
    },
    {
      name: 'page-display-passes-below-the-pipeline', severity: 'error', comment: 'A display pass is one step of the pipeline: it knows neither the pipeline nor its routes.',
      from: { path: '^src/modules/page/display/passes/' }, to: { path: '^src/modules/page/display/(pipeline|display-pages|display-routes)\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
  },
};
