import { HttpError } from '../../../util/errors.js';
import type { RevisionRow } from './revision.js';

/** A revision that now belongs to another page (the page was moved). */
export class RevisionMoved extends Error {
  constructor(readonly title: string) {
    super(`The revision belongs to ${title}`);
  }
}

/** Whether a stored revision belongs to the page that moved away from its title (its URLs redirect). */
export const movedAway = (row: RevisionRow) => row.moved_to !== null && row.page_id !== null && row.page_id === row.moved_page;

/** A page that was moved away without leaving a redirect: 404, naming where it went. */
export class PageMoved extends HttpError {
  constructor(from: string, readonly target: string) {
    super(404, 'page-moved', `${from} was moved to ${target}.`, { extensions: { moved_to: target } });
  }
}
