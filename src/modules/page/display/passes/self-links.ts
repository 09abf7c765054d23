import type { DisplayPass } from '../display-pass.js';

/**
 * Links to the page itself become MediaWiki's self-link markup: no href and no title (bold in
 * its skins); a link to a fragment of the page stays a link to that fragment.
 */
export const selfLinksPass: DisplayPass = {
  name: 'self-links',
  shouldRun: (ctx) => ctx.links.some((l) => l.target === ctx.title),
  transform(_doc, ctx) {
    for (const link of ctx.links) {
      if (link.target !== ctx.title) continue;
      const element = link.element;
      element.attribs = link.fragment
        ? { href: `#${link.fragment}`, class: 'mw-selflink-fragment' }
        : { class: 'mw-selflink selflink' };
    }
  },
};
