import { diff3Merge } from 'node-diff3';

/** Where the two sides changed the same lines of the base differently. */
export interface ConflictHunk {
  /** Line number (1-based) in the base where the hunk starts. */
  base_line: number;
  base: string[];
  /** The lines as one side (the branch) has them. */
  ours: string[];
  /** The lines as the other side (the page's current revision) has them. */
  theirs: string[];
}

export type MergeOutcome = { clean: true; text: string } | { clean: false; conflicts: ConflictHunk[] };

const lines = (text: string) => text.split('\n');

/**
 * A line-wise three-way merge of wikitext, as MediaWiki merges edit conflicts (diff3): changes of
 * one side to lines the other left alone are taken; the same change made on both sides is taken
 * once; different changes to the same lines are conflicts, reported as hunks.
 */
export function mergeWikitext(base: string, ours: string, theirs: string): MergeOutcome {
  if (ours === theirs || theirs === base) return { clean: true, text: ours };
  if (ours === base) return { clean: true, text: theirs };
  const regions = diff3Merge(lines(ours), lines(base), lines(theirs), { excludeFalseConflicts: true });
  const merged: string[] = [];
  const conflicts: ConflictHunk[] = [];
  for (const region of regions) {
    if (region.ok) merged.push(...region.ok);
    else if (region.conflict) {
      const { a, b, o, oIndex } = region.conflict;
      conflicts.push({ base_line: oIndex + 1, base: o, ours: a, theirs: b });
    }
  }
  return conflicts.length ? { clean: false, conflicts } : { clean: true, text: merged.join('\n') };
}
