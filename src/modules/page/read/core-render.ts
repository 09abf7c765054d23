import type { CoreRender, PageBundle, Part } from '../../../upstream/parsoid.js';
import { DATA_MW_999_TYPE, HTML_999_TYPE, splitDataMw } from '../model/html-versions.js';

/** A property the wiki does not expose (data-parsoid through the core REST API): stored empty, typed ''. */
export const UNAVAILABLE: Part = { contentType: '', body: Buffer.alloc(0) };

/** A core REST API render in the stored form: data-mw split out of the HTML as in a 999.x page bundle. */
export function fromCore(core: CoreRender): { bundle: PageBundle; wikitext: Part } {
  const { html, dataMw } = splitDataMw(core.html);
  return {
    bundle: {
      html: { contentType: HTML_999_TYPE, body: Buffer.from(html) },
      dataParsoid: null,
      dataMw: { contentType: DATA_MW_999_TYPE, body: Buffer.from(JSON.stringify(dataMw)) },
    },
    wikitext: core.wikitext,
  };
}

/** The page a redirect's Parsoid HTML points to, if it is one. */
export function redirectTarget(html: string): string | undefined {
  const m = /<link rel="mw:PageProp\/redirect" href="\.\/([^"]+)"/.exec(html);
  if (!m) return undefined;
  const decoded = m[1]!.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'");
  try {
    return decodeURIComponent(decoded);
  } catch {
    return decoded;
  }
}
