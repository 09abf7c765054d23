import render from 'dom-serializer';
import { parseDocument } from 'htmlparser2';
import type { LinkTargetState } from '../../../upstream/action-api.js';
import type { DisplayContext, DisplayOptions, DisplayPass } from './display-pass.js';
import type { ImageList } from './image-lists.js';
import { badImagesPass } from './passes/bad-images.js';
import { noviewerPass } from './passes/noviewer.js';
import { linkStatesPass } from './passes/link-states.js';
import { sectionEditLinksPass } from './passes/section-edit-links.js';
import { selfLinksPass } from './passes/self-links.js';
import { tocPass } from './passes/toc.js';
import { wikiLinks } from './wiki-links.js';

/**
 * The passes in their one order (as MediaWiki's DefaultOutputPipelineFactory lists its stages):
 * bad images out first (their links go with them), then links (self links after their states, so a self link is never red), then the TOC from
 * the headings as Parsoid wrote them, then the headings' edit links.
 */
const PASSES: DisplayPass[] = [badImagesPass, noviewerPass, linkStatesPass, selfLinksPass, tocPass, sectionEditLinksPass];

const NO_IMAGES: ImageList = { files: new Map(), version: 'none' };

/** What a display depends on besides the render and its links' states. */
export interface DisplayImages {
  badImages: ImageList;
  noviewerImages: ImageList;
  pageImage: string | undefined;
}
export const NO_DISPLAY_IMAGES: DisplayImages = { badImages: NO_IMAGES, noviewerImages: NO_IMAGES, pageImage: undefined };

/**
 * A render's display HTML: parsed once, the states of its link targets looked up, every pass
 * that has work run over the one document, serialised once.
 */
export async function displayHtml(
  title: string,
  html: string,
  options: DisplayOptions,
  statesOf: (targets: string[]) => Promise<ReadonlyMap<string, LinkTargetState>>,
  images: DisplayImages = NO_DISPLAY_IMAGES,
): Promise<{ html: string; targets: string[]; states: ReadonlyMap<string, LinkTargetState> }> {
  const doc = parseDocument(html);
  const links = wikiLinks(doc);
  const targets = [...new Set(links.map((l) => l.target))];
  const states = await statesOf(targets);
  const ctx: DisplayContext = { title, options, links, states, ...images };
  for (const pass of PASSES) if (pass.shouldRun(ctx)) pass.transform(doc, ctx);
  return { html: render(doc, { encodeEntities: 'utf8' }), targets, states };
}
