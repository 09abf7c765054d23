import type { Wiki } from '../../../upstream/wiki.js';

/** RFC 7234's warn-code for an answer served without the check it was due (the wiki is not answering). */
const REVALIDATION_FAILED = '111 - "Revalidation Failed"';

/** Stored content served while its wiki's circuit is open says so (headers built once per render are copied, not changed). */
export function markedIfUnchecked(wiki: Wiki, headers: Record<string, string>): Record<string, string> {
  return wiki.circuit.isOpen ? { ...headers, warning: REVALIDATION_FAILED } : headers;
}
