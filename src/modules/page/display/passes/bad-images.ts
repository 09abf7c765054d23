import { DomUtils } from 'htmlparser2';
import type { Element } from 'domhandler';
import type { DisplayPass } from '../display-pass.js';
import { fileOf, listedFor } from '../image-lists.js';

export const isMedia = (e: Element) => /(^|\s)mw:(File|Image)(\/|\s|$)/.test(e.attribs.typeof ?? '');

/** The file a Parsoid media element shows (its image's `resource`, or a broken-media span's). */
export function mediaFile(media: Element): string | undefined {
  const resource = DomUtils.findOne((e) => e.attribs.resource !== undefined, media.children)?.attribs.resource ?? media.attribs.resource;
  return resource ? fileOf(resource) : undefined;
}

/**
 * Images on the wiki's bad image list are taken out, except on the pages the list allows them
 * on: Parsoid applies the list only when it renders, so a stored render goes stale when the list
 * changes; this applies today's.
 */
export const badImagesPass: DisplayPass = {
  name: 'bad-images',
  shouldRun: (ctx) => ctx.badImages.files.size > 0,
  transform(doc, ctx) {
    for (const media of DomUtils.findAll(isMedia, doc.children)) if (listedFor(ctx.badImages, mediaFile(media), ctx.title)) DomUtils.removeElement(media);
  },
};
