/**
 * The shape of src/, checked by `npm test` (scripts/test.sh): no import cycles, and imports point
 * down the layers (docs in README's Layout section):
 *   entry points (bin/: main, serve, supervisor, startup, backfill, snapshot, tool) and app.ts
 *   modules/* (each alone)   upstream/ (the wikis)   table-access/ (modules' handles on tables)
 *   http/ (the server)  →  router/ (dispatch, validation)  →  storage/  →  util/ and config
 */
const ENTRY = '^src/(bin/[^/]+|app)\\.ts$';

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
    // Inside the page module, folders in layers (README's Layout section): model/ (types, pure
    // helpers) < tables/ (one class per table) < read/ < display/ < edit/ and follow/ < drafts/ (branches, on edit/) < v1/ and
    // rest-v1/ (routes) < index.ts (the composition).
    pageLayer('page-model-at-the-bottom', 'model', '(tables|read|display|edit|follow|v1|rest-v1)/|index\\.ts$|page-api\\.ts$'),
    pageLayer('page-tables-above-model', 'tables', '(read|display|edit|follow|v1|rest-v1)/|index\\.ts$|page-api\\.ts$'),
    pageLayer('page-read-below-edit-and-follow', 'read', '(display|edit|follow|v1|rest-v1)/|index\\.ts$|page-api\\.ts$'),
    pageLayer('page-display-above-read', 'display', '(edit|follow|v1|rest-v1)/|index\\.ts$|page-api\\.ts$'),
    pageLayer('page-edit-beside-follow', 'edit', '(follow|v1|rest-v1)/|index\\.ts$|page-api\\.ts$'),
    pageLayer('page-follow-beside-edit', 'follow', '(edit|v1|rest-v1)/|index\\.ts$|page-api\\.ts$'),
    pageLayer('page-drafts-above-edit', 'drafts', '(follow|v1|rest-v1)/|index\\.ts$|page-api\\.ts$'),
    pageLayer('page-v1-apart-from-rest-v1', 'v1', '(rest-v1|follow|drafts)/|index\\.ts$'),
    pageLayer('page-rest-v1-builds-on-the-api-not-the-composition', 'rest-v1', '(v1|follow)/|index\\.ts$'),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
  },
};
