import type { DisplayPass } from '../display-pass.js';
import { setClasses } from '../display-pass.js';
import { hrefOf, textOf } from '../wiki-links.js';

/** The classes this pass decides; cleared first, so it runs again on HTML marked at render time. */
const STATE_CLASSES = ['new', 'mw-redirect', 'mw-disambig', 'stub'] as const;

/**
 * Marks each internal link by the state of its target today (Parsoid marks them only when it
 * renders, and the mark goes stale): a missing page is a red link (`new`, "X (page does not
 * exist)", an edit link with redlink=1), a redirect `mw-redirect`, a disambiguation page
 * `mw-disambig`, a content page shorter than the reader's stub threshold `stub`.
 */
export const linkStatesPass: DisplayPass = {
  name: 'link-states',
  shouldRun: (ctx) => ctx.links.length > 0,
  transform(_doc, ctx) {
    for (const link of ctx.links) {
      const state = ctx.states.get(link.target);
      if (!state || link.target === ctx.title) continue;
      const { attribs } = link.element;
      const add: string[] = [];
      if (!state.exists) {
        add.push('new');
        attribs.title = `${textOf(link.target)} (page does not exist)`;
        attribs.href = `${hrefOf(link.target)}?action=edit&redlink=1`;
      } else {
        // A link marked red when rendered: its href and title as Parsoid writes them for a page.
        if (attribs.href?.includes('redlink=1') || attribs.title?.endsWith(' (page does not exist)')) {
          attribs.href = hrefOf(link.target) + (link.fragment !== undefined ? `#${link.fragment}` : '');
          attribs.title = textOf(link.target);
        }
        if (state.redirect) add.push('mw-redirect');
        if (state.disambiguation) add.push('mw-disambig');
        const stub = ctx.options.stubThreshold;
        if (stub > 0 && !state.redirect && state.ns === 0 && state.length !== null && state.length < stub) add.push('stub');
      }
      setClasses(attribs, add, STATE_CLASSES);
    }
  },
};
