/**
 * The render an `If-Match` names, in every form the service's ETags are sent back: `"{rev}/{tid}"`
 * (RESTBase's, with its `/stash` suffix), MediaWiki's `"{rev}/{tid}/{flavor}/html"`, weak
 * (`W/"…"`, as a cache that compressed the answer hands it on) or unquoted. `stashed`: the ETag
 * of a stash (flavor or suffix `stash`).
 */
export function renderOfETag(value: string | undefined): { rev: number; tid: string; stashed: boolean } | undefined {
  const m = /^\s*(?:W\/)?"?(\d+)\/([0-9a-fA-F-]{36})((?:\/[a-z_]+)*)"?\s*$/.exec(value ?? '');
  return m ? { rev: Number(m[1]), tid: m[2]!.toLowerCase(), stashed: m[3]!.split('/').includes('stash') } : undefined;
}
