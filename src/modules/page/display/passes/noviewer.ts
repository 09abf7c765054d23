import { DomUtils } from 'htmlparser2';
import type { DisplayPass } from '../display-pass.js';
import { setClasses } from '../display-pass.js';
import { fileOf, listedFor } from '../image-lists.js';
import { isMedia, mediaFile } from './bad-images.js';

/**
 * Images media viewers must not open get `class="noviewer"` (MediaViewer and Popups skip them):
 * the page's own image (PageImages' choice: it stands for the page, not for itself) and those on
 * the wiki's noviewer list.
 */
export const noviewerPass: DisplayPass = {
  name: 'noviewer',
  shouldRun: (ctx) => ctx.pageImage !== undefined || ctx.noviewerImages.files.size > 0,
  transform(doc, ctx) {
    const pageImage = ctx.pageImage === undefined ? undefined : fileOf(`./File:${ctx.pageImage}`);
    for (const media of DomUtils.findAll(isMedia, doc.children)) {
      const file = mediaFile(media);
      if (file === undefined) continue;
      if (file === pageImage || listedFor(ctx.noviewerImages, file, ctx.title)) setClasses(media.attribs, ['noviewer'], []);
    }
  },
};
