/**
 * The shape of src/, checked by `npm test` (scripts/test.sh): no import cycles, and imports point
 * down the layers (docs in README's Layout section):
 *   entry points (main, serve, supervisor, startup, app, backfill)
 *   modules/* (each alone)   upstream/ (the wikis)   internal/ (modules' handles on tables)
 *   http/ (the server)  →  router/ (dispatch, validation)  →  storage/  →  base files in src/
 */
const ENTRY = '^src/(main|serve|supervisor|startup|app|backfill)\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'Import cycles make the start-up order and the layers unreadable.', from: {}, to: { circular: true } },
    { name: 'entry-points-on-top', severity: 'error', comment: 'Only entry points import entry points.', from: { pathNot: ENTRY }, to: { path: ENTRY } },
    {
      name: 'storage-below-everything', severity: 'error', comment: 'Storage knows nothing of HTTP, routing, modules or the wikis.',
      from: { path: '^src/storage/' }, to: { path: '^src/(http|router|modules|upstream|internal)/' },
    },
    {
      name: 'router-below-http', severity: 'error', comment: 'Routing dispatches; the HTTP server and the modules sit on it.',
      from: { path: '^src/router/' }, to: { path: '^src/(http|modules|upstream|internal)/' },
    },
    {
      name: 'http-below-modules', severity: 'error', comment: 'The HTTP layer serves any module and names none.',
      from: { path: '^src/http/' }, to: { path: '^src/(modules|upstream|internal)/' },
    },
    {
      name: 'upstream-below-modules', severity: 'error', comment: 'Clients of the wikis know nothing of the modules that use them.',
      from: { path: '^src/upstream/' }, to: { path: '^src/(modules|internal)/' },
    },
    {
      name: 'internal-below-modules', severity: 'error', comment: "Modules' handles on tables know no module.",
      from: { path: '^src/internal/' }, to: { path: '^src/(modules|upstream)/' },
    },
    {
      name: 'modules-apart', severity: 'error', comment: 'A module talks to another through internal requests, never by import.',
      from: { path: '^src/modules/([^/]+)/' }, to: { path: '^src/modules/', pathNot: '^src/modules/$1/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
  },
};
