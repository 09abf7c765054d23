// A test reporter that prints, at the end of a run, when each test file began and ended (seconds
// from the run's start), longest file first: what the order of the files in scripts/test.sh is
// kept from.
import path from 'node:path';

export default async function* fileTimes(source) {
  const t0 = Date.now();
  const files = new Map();
  for await (const event of source) {
    // A file's own test (named by its path) is dequeued when its process starts, completed when it ends.
    const file = event.data?.file;
    if (!file || typeof event.data.name !== 'string' || path.resolve(event.data.name) !== file) continue;
    const now = (Date.now() - t0) / 1000;
    if (event.type === 'test:dequeue') files.set(file, { start: now, end: now });
    else if (event.type === 'test:complete' && files.has(file)) files.get(file).end = now;
  }
  const rows = [...files.entries()].map(([file, t]) => ({ file: path.relative(process.cwd(), file), ...t })).sort((a, b) => (b.end - b.start) - (a.end - a.start));
  yield `# test files by duration (s from the run's start: began, ended, took)\n`;
  for (const r of rows) yield `# ${r.start.toFixed(0).padStart(5)} ${r.end.toFixed(0).padStart(5)} ${(r.end - r.start).toFixed(0).padStart(5)}  ${r.file}\n`;
}
