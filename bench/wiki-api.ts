/** Parsoid's page bundle with data-mw split out, as the service asks for it. */
export const PAGEBUNDLE_999 = 'application/json; charset=utf-8; profile="https://www.mediawiki.org/wiki/Specs/pagebundle/999.0.0"';

/** One Action API call to the wiki, as an anonymous client. */
export async function api(wikiUrl: string, params: Record<string, string>, post = false): Promise<any> {
  const body = new URLSearchParams({ format: 'json', formatversion: '2', ...params });
  const res = post
    ? await fetch(`${wikiUrl}/api.php`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body })
    : await fetch(`${wikiUrl}/api.php?${body}`);
  return res.json();
}
