import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A farm's wikis as the Action API answers their site info, chosen by path (`/{label}/api.php`),
 * for tests of how a farm's wikis are found: the labels in `wikis` answer as MediaWikis, any
 * other with the farm's HTML "no such wiki" page. Counts what it was asked, by label.
 */
export interface FakeFarm {
  url: string;
  asked: Map<string, number>;
  wikis: Set<string>;
  close(): Promise<void>;
}

const siteInfo = (label: string, server: string) => ({
  batchcomplete: true,
  query: {
    general: {
      generator: 'MediaWiki 1.39.10', sitename: `Wiki ${label}`, lang: 'en', case: 'first-letter', server, wikiid: `${label}wiki`,
      legaltitlechars: " %!\"$&'()*,\\-.\\/0-9:;=?@A-Z\\\\^_`a-z~\\x80-\\xFF+",
    },
    namespaces: { 0: { id: 0, case: 'first-letter', name: '', content: true }, 2: { id: 2, case: 'first-letter', name: 'User', canonical: 'User' } },
    namespacealiases: [],
    specialpagealiases: [],
    rightsinfo: { url: '', text: '' },
  },
});

export async function startFakeFarm(labels: string[]): Promise<FakeFarm> {
  const asked = new Map<string, number>();
  const wikis = new Set(labels);
  const server = http.createServer((req, res) => {
    const label = /^\/([^/]+)\//.exec(req.url ?? '')?.[1] ?? '';
    asked.set(label, (asked.get(label) ?? 0) + 1);
    if (!wikis.has(label)) {
      res.writeHead(404, { 'content-type': 'text/html' }).end('<html><body>No wiki is found here.</body></html>');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(siteInfo(label, `http://${label}.farm.test`)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, asked, wikis, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
