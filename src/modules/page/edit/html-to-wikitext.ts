import { isDeepStrictEqual } from 'node:util';
import { WIKITEXT_TYPE, type Part } from '../../../upstream/parsoid.js';
import type { Wiki } from '../../../upstream/wiki.js';
import { HTML_2, htmlTypeOf, htmlVersionOf, toHtml2 } from '../model/html-versions.js';
import type { Render } from '../model/render.js';
import { gunzip } from '../../../util/compression.js';
import { workGate } from '../../../util/concurrency-limit.js';

/** An element with its data-mw inline: HTML of the 2.x kind. */
const INLINE_DATA_MW = /<[a-z][^>]*\sdata-mw=/i;
const text = async (render: Render, prop: 'html' | 'data-parsoid' | 'data-mw') => (await gunzip(render.parts[prop])).toString('utf8');

/**
 * The version the edited HTML is in: what the document says of itself, else its Content-Type,
 * else what its markup shows (data-mw inline is 2.x). Never the route's: a rest_v1 client may
 * hold 999.x HTML and a /v1/ client 2.x.
 */
function editedVersion(html: string, contentType: string | undefined): string {
  return htmlVersionOf(html, contentType) ?? (INLINE_DATA_MW.test(html) ? HTML_2 : '999.0.0');
}

const is2x = (version: string) => version.startsWith('2.');

/**
 * Edited HTML to wikitext through Parsoid. Given the stored render the edit started from, it is
 * selective serialisation: Parsoid gets that render as the original, **in the same HTML version
 * and with data-mw in the same place as the edited document** (2.x: inline, as the client was
 * served it; 999.x: apart), so Parsoid compares like with like and every part the edit left alone
 * keeps its exact wikitext. Mixing versions made Parsoid see untouched nodes as changed, or refuse
 * data-mw apart from a 2.x document ("Modified data-mw is not supported by schema version 2.x").
 * `dataMw` is the edited document's data-mw when it travels apart (999.x only).
 *
 * A document the edit left exactly as it was served (a save without changes, an editor switched to
 * wikitext without editing) is the revision's own wikitext: what selective serialisation gives
 * back for it, answered from the render without asking Parsoid.
 */
export function htmlToWikitext(wiki: Wiki, title: string | undefined, html: string, from: HtmlSource): Promise<Part> {
  return transformTurn(wiki.domain, () => serialised(wiki, title, html, from));
}

/** What the edited HTML came from (see `htmlToWikitext`). */
interface HtmlSource {
  render?: Render;
  revid?: number;
  dataMw?: unknown;
  scrubWikitext?: boolean;
  original?: Record<string, unknown>;
  contentType?: string;
  contentModel?: string;
}

/**
 * Edits made wikitext at once by this process, and waiting to be. Each holds its original
 * render's HTML, data-parsoid and data-mw as strings and objects (some 10 MB for an article of
 * 800 KB) while the wiki's Parsoid answers: three hundred small edits of a long article posted at
 * once to a transform ran a 128 MB heap out. Past those waiting, a 503.
 */
const transformTurn = workGate(8, 256, 'transforms-busy', 'edited documents in wikitext');

async function serialised(wiki: Wiki, title: string | undefined, html: string, from: HtmlSource): Promise<Part> {
  // Another content model's HTML (JSON's table) is Parsoid's to turn back into that model's text.
  if (from.contentModel && from.contentModel !== 'wikitext') {
    const part = await wiki.transform('html', 'wikitext', { title, revid: from.revid }, { html, contentmodel: from.contentModel });
    // Typed as the model's text is, as MediaWiki's REST API types it (Parsoid says wikitext).
    return from.contentModel === 'json' ? { ...part, contentType: 'application/json' } : part;
  }
  const { render } = from;
  const options = from.scrubWikitext ? { scrub_wikitext: true } : {};
  const version = editedVersion(html, from.contentType);
  // data-mw apart from the HTML exists only in 999.x; a 2.x document carries its own inline.
  const editedDataMw = (dataMw: unknown) => (dataMw === undefined || is2x(version) ? {} : { 'data-mw': { body: dataMw } });
  if (from.original) {
    // The client holds the original itself (Parsoid's own convention): passed on as it came.
    const kind = from.original['data-parsoid'] ? 'pagebundle' : 'html';
    return wiki.transform(kind, 'wikitext', { title, revid: from.revid }, { html, original: from.original, ...editedDataMw(from.dataMw), ...options });
  }
  // Without data-parsoid (a wiki served through the core REST API) there is no selective
  // serialisation to ask for: the edited HTML goes alone, with the render's data-mw if 999.x.
  const noSelser = render !== undefined && render.types['data-parsoid'] === '';
  if (!render || noSelser) {
    const dataMw = from.dataMw ?? (noSelser && !is2x(version) ? JSON.parse(await text(render, 'data-mw')) : undefined);
    return wiki.transform('html', 'wikitext', { title, revid: from.revid }, { html, ...options, ...editedDataMw(dataMw) });
  }
  const [storedHtml, dataMwText] = await Promise.all([text(render, 'html'), text(render, 'data-mw')]);
  const storedDataMw = JSON.parse(dataMwText) as { ids?: Record<string, unknown> };
  // The bytes the client was served (toHtml2 is what every 2.x answer is made with).
  const servedHtml = is2x(version) ? toHtml2(storedHtml, storedDataMw, version) : storedHtml;
  const untouched = html === servedHtml && !from.scrubWikitext && (from.dataMw === undefined || isDeepStrictEqual(from.dataMw, storedDataMw));
  if (untouched) return { contentType: render.types.wikitext || WIKITEXT_TYPE, body: await gunzip(render.parts.wikitext) };
  const dataParsoid = await text(render, 'data-parsoid');
  const original = is2x(version)
    ? {
        html: { headers: { 'content-type': htmlTypeOf(version) }, body: servedHtml },
        'data-parsoid': { body: JSON.parse(dataParsoid) as unknown },
      }
    : {
        html: { headers: { 'content-type': render.types.html }, body: storedHtml },
        'data-parsoid': { body: JSON.parse(dataParsoid) as unknown },
        'data-mw': { body: storedDataMw },
      };
  return wiki.transform('pagebundle', 'wikitext', { title: render.title, revid: render.rev }, {
    html,
    ...options,
    ...editedDataMw(from.dataMw ?? storedDataMw),
    original,
  });
}
