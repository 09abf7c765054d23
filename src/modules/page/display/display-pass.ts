import type { Document } from 'domhandler';
import type { LinkTargetState } from '../../../upstream/action-api.js';
import type { ImageList } from './image-lists.js';
import type { WikiLink } from './wiki-links.js';

/** What a reader asked of the display HTML (query options). */
export interface DisplayOptions {
  /** Section edit links (off for clients that do not edit). */
  sectionEdit: boolean;
  /** The table of contents, where MediaWiki's rules show one. */
  toc: boolean;
  /** Links to content pages shorter than this many bytes are marked `stub` (0: none). */
  stubThreshold: number;
}

/** What every pass may read: the page, the reader's options, the state of each link target. */
export interface DisplayContext {
  title: string;
  options: DisplayOptions;
  links: WikiLink[];
  states: ReadonlyMap<string, LinkTargetState>;
  /** The wiki's bad image list today. */
  badImages: ImageList;
  /** The wiki's list of images media viewers must not open. */
  noviewerImages: ImageList;
  /** The page's own image (PageImages), which viewers must not open either. */
  pageImage: string | undefined;
}

/**
 * One stage of the display pipeline, as MediaWiki's OutputTransform stages are: whether it has
 * anything to do, and the change it makes to the one parsed document all passes share.
 */
export interface DisplayPass {
  name: string;
  shouldRun(ctx: DisplayContext): boolean;
  transform(doc: Document, ctx: DisplayContext): void;
}

/** Adds and removes class names, keeping the others and their order. */
export function setClasses(attribs: Record<string, string>, add: string[], remove: readonly string[]): void {
  const kept = (attribs.class ?? '').split(/\s+/).filter((c) => c && !remove.includes(c));
  const classes = [...kept, ...add.filter((c) => !kept.includes(c))];
  if (classes.length) attribs.class = classes.join(' ');
  else delete attribs.class;
}
