// Runs test files `--concurrency N` at a time, in the order given (node --test sorts the files it
// is given by name, so the longest could start last and run on alone): the spec reporter for
// each test, then each file's start, end and duration (file-times.mjs). Exits 1 if a test failed.
//   node scripts/run-tests.mjs --concurrency 4 FILE...
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { compose } from 'node:stream';
import { parseArgs } from 'node:util';
import fileTimes from './file-times.mjs';

const { values, positionals: files } = parseArgs({ options: { concurrency: { type: 'string', default: '1' } }, allowPositionals: true });
const tests = run({ files, concurrency: Number(values.concurrency) });
tests.on('test:fail', (data) => {
  if (!data.todo && !data.skip) process.exitCode = 1;
});
tests.pipe(new spec()).pipe(process.stdout, { end: false });
tests.pipe(compose(fileTimes)).pipe(process.stdout, { end: false });
