import PQueue from 'p-queue';

/**
 * Pages made at once for all the snapshot answers of this process. A page's line is its whole
 * record (tens of kilobytes, megabytes for a long article, twice that as a JS string): made all at
 * once and joined, twenty answers of 500 pages asked together filled a 128 MB heap and ended the
 * process. Pages the store lacks are rendered by the wiki meanwhile.
 */
const making = new PQueue({ concurrency: 8 });
/** Pages of one answer made ahead of the one being sent: the answer is sent as its client takes it. */
export const AHEAD = 4;

/**
 * Each item's line, in order, made `AHEAD` at a time as the reader takes them (none where `make`
 * gives none), eight at once for every answer of the process together.
 */
export async function* linesInOrder<T>(items: readonly T[], make: (item: T) => Promise<string | undefined>): AsyncGenerator<string> {
  const ahead: Promise<string | undefined>[] = [];
  let next = 0;
  while (next < items.length || ahead.length > 0) {
    while (ahead.length < AHEAD && next < items.length) {
      const item = items[next++]!;
      const made = making.add(() => make(item)) as Promise<string | undefined>;
      // A client that hangs up leaves these unread: their failures are nobody's to report.
      made.catch(() => undefined);
      ahead.push(made);
    }
    const line = await ahead.shift()!;
    if (line) yield line;
  }
}
