import render from 'dom-serializer';
import { parseDocument } from 'htmlparser2';
import type { LinkTargetState } from '../../../upstream/action-api.js';
import type { DisplayContext, DisplayOptions, DisplayPass } from './display-pass.js';
import type { BadImageList } from './bad-images.js';
import { badImagesPass } from './passes/bad-images.js';
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
const PASSES: DisplayPass[] = [badImagesPass, linkStatesPass, selfLinksPass, tocPass, sectionEditLinksPass];

const NO_BAD_IMAGES: BadImageList = { files: new Map(), version: 'none' };

/**
 * A render's display HTML: parsed once, the states of its link targets looked up, every pass
 * that has work run over the one document, serialised once.
 */
export async function displayHtml(
  title: string,
  html: string,
  options: DisplayOptions,
  statesOf: (targets: string[]) => Promise<ReadonlyMap<string, LinkTargetState>>,
  badImages: BadImageList = NO_BAD_IMAGES,
): Promise<{ html: string; targets: string[]; states: ReadonlyMap<string, LinkTargetState> }> {
  const doc = parseDocument(html);
  const links = wikiLinks(doc);
  const targets = [...new Set(links.map((l) => l.target))];
  const states = await statesOf(targets);
  const ctx: DisplayContext = { title, options, links, states, badImages };
  for (const pass of PASSES) if (pass.shouldRun(ctx)) pass.transform(doc, ctx);
  return { html: render(doc, { encodeEntities: 'utf8' }), targets, states };
}
