import { DomUtils } from 'htmlparser2';
import type { Element } from 'domhandler';
import type { DisplayPass } from '../display-pass.js';
import { fileOf } from '../bad-images.js';

const isMedia = (e: Element) => /(^|\s)mw:(File|Image)(\/|\s|$)/.test(e.attribs.typeof ?? '');

/**
 * Images on the wiki's bad image list are taken out, except on the pages the list allows them
 * on: Parsoid applies the list only when it renders, so a stored render goes stale when the list
 * changes; this applies today's.
 */
export const badImagesPass: DisplayPass = {
  name: 'bad-images',
  shouldRun: (ctx) => ctx.badImages.files.size > 0,
  transform(doc, ctx) {
    for (const media of DomUtils.findAll(isMedia, doc.children)) {
      const resource = DomUtils.findOne((e) => e.attribs.resource !== undefined, media.children)?.attribs.resource ?? media.attribs.resource;
      const file = resource ? fileOf(resource) : undefined;
      const allowedOn = file ? ctx.badImages.files.get(file) : undefined;
      if (allowedOn && !allowedOn.has(ctx.title)) DomUtils.removeElement(media);
    }
  },
};
