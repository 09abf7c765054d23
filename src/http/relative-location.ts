/**
 * A `Location` or `Content-Location` made relative to the request's own path, so the service
 * works behind a proxy that serves it under another prefix (`/api/v1/` for `/{domain}/v1/`): the
 * client resolves it against the URL it asked for.
 * Only the service's own URLs under the request's domain are rewritten: absolute URLs, and a
 * path elsewhere (a stored redirect a client set), are left as they are.
 */
export function relativeLocation(requestPath: string, location: string): string {
  if (!location.startsWith('/') || location.startsWith('//')) return location;
  const cut = location.search(/[?#]/);
  const targetPath = cut < 0 ? location : location.slice(0, cut);
  const rest = cut < 0 ? '' : location.slice(cut);
  const from = requestPath.split('/').slice(0, -1);
  const to = targetPath.split('/');
  if (from.length < 2 || to[1] !== from[1]) return location;
  let common = 0;
  while (common < from.length && common < to.length - 1 && from[common] === to[common]) common++;
  let relative = '../'.repeat(from.length - common) + to.slice(common).join('/');
  // A first segment with a colon would read as a scheme (`Talk:Foo`); an empty one as "here".
  const first = relative.split('/', 1)[0]!;
  if (relative === '' || first.includes(':')) relative = `./${relative}`;
  return relative + rest;
}
