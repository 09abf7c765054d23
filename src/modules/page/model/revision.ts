export interface RevisionRow {
  title: string;
  rev: number;
  /** The newest render of this revision, if there is one. */
  tid: string | null;
  page_id: number | null;
  timestamp: string | null;
  user_id: number | null;
  user_text: string | null;
  comment: string | null;
  minor: boolean | null;
  size: number | null;
  sha1: string | null;
  content_model: string | null;
  text_hidden: boolean | null;
  user_hidden: boolean | null;
  comment_hidden: boolean | null;
  latest_rev: number | null;
  latest_tid: string | null;
  deleted: string | null;
  checked: string | null;
  first_seen: string | null;
  /** When the wiki last described this revision (its hidden flags, that it exists). */
  seen: string | null;
  parent_id: number | null;
  tags: string[] | null;
  /** Where the page stored under this title moved (static), and its page id: its revisions are there now. */
  moved_to: string | null;
  moved_page: number | null;
  /** When the wiki last told of a change to the page (static; see PageRevisions.markUnchecked). */
  noticed?: string | null;
}

/** A revision as clients see it: hidden fields are left out. */
export function revisionMetadata(row: RevisionRow): Record<string, unknown> {
  return {
    title: row.title,
    rev: row.rev,
    parent_id: row.parent_id ?? null,
    tid: row.tid,
    page_id: row.page_id,
    timestamp: row.timestamp,
    user_id: row.user_hidden ? null : row.user_id,
    user_text: row.user_hidden ? null : row.user_text,
    comment: row.comment_hidden ? null : row.comment,
    minor: row.minor,
    size: row.size,
    sha1: row.sha1,
    content_model: row.content_model,
    tags: row.tags ?? [],
    hidden: { text: !!row.text_hidden, user: !!row.user_hidden, comment: !!row.comment_hidden },
  };
}
