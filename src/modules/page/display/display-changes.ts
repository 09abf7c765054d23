import type { RequestContext } from '../../../router/types.js';
import type { CachePurger } from '../../../upstream/cache-purger.js';
import type { Metrics } from '../../../util/metrics.js';
import { displayPurge } from '../model/purge-urls.js';
import { surrogateKeys } from '../model/surrogate-keys.js';
import type { DisplayPages } from './display-pages.js';
import type { ImageListPage } from './image-lists.js';
import type { LinkStates } from './link-states.js';
import type { PageImages } from './page-images.js';

/**
 * What the display HTML does when the wiki changes pages: a page's own image is asked again; an
 * image list that changed makes every display again (any page may show an image it names); and
 * the displays of the pages linking to one whose state changed (created, deleted, moved) are made
 * again, each purged from the caches in front.
 */
export class DisplayChanges {
  constructor(private readonly parts: {
    display: DisplayPages;
    linkStates: LinkStates;
    pageImages: PageImages;
    imageLists: ImageListPage[];
    purger: CachePurger;
    metrics: Metrics;
  }) {}

  async changed(ctx: RequestContext, domain: string, titles: string[]): Promise<void> {
    const { display, linkStates, pageImages, imageLists, purger, metrics } = this.parts;
    for (const title of titles) pageImages.forget(domain, title);
    const lists = imageLists.filter((list) => titles.includes(list.page));
    if (lists.length) {
      for (const list of lists) list.forget(domain);
      display.forgetAll();
      purger.purgeLater({ urls: [], keys: [surrogateKeys.displays(domain)] });
    }
    for (const { linking } of await linkStates.changed(ctx, domain, titles)) {
      for (const title of linking) {
        display.forget(domain, title);
        purger.purgeLater(displayPurge(domain, title));
      }
      metrics.displayInvalidations.inc({ domain: metrics.wikiLabel(domain) }, linking.length);
    }
  }
}
