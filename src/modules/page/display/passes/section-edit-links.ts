import { Element, Text } from 'domhandler';
import { DomUtils } from 'htmlparser2';
import type { DisplayPass } from '../display-pass.js';
import { hrefOf } from '../wiki-links.js';
import { headingsOf } from './headings.js';

const bracket = (text: string) => new Element('span', { class: 'mw-editsection-bracket' }, [new Text(text)]);

/**
 * MediaWiki's heading markup with a section edit link, for each editable section (Parsoid's
 * section id > 0; sections a template made are not editable here):
 * `<div class="mw-heading mw-headingN"><hN>…</hN><span class="mw-editsection">[<a>edit</a>]</span></div>`.
 */
export const sectionEditLinksPass: DisplayPass = {
  name: 'section-edit-links',
  shouldRun: (ctx) => ctx.options.sectionEdit,
  transform(doc, ctx) {
    for (const heading of headingsOf(doc)) {
      if (heading.sectionId < 1) continue;
      const link = new Element('a', { href: `${hrefOf(ctx.title)}?action=edit&section=${heading.sectionId}`, title: `Edit section: ${heading.text}` }, [
        new Element('span', {}, [new Text('edit')]),
      ]);
      const editSection = new Element('span', { class: 'mw-editsection' }, [bracket('['), link, bracket(']')]);
      const wrapper = new Element('div', { class: `mw-heading mw-heading${heading.level}` }, []);
      DomUtils.replaceElement(heading.element, wrapper);
      DomUtils.appendChild(wrapper, heading.element);
      DomUtils.appendChild(wrapper, editSection);
    }
  },
};
