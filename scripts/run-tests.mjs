// Runs test files `--concurrency N` at a time, in the order given (node --test sorts the files it
// is given by name, so the longest could start last and run on alone): the spec reporter for
// each test, then each file's start, end and duration (file-times.mjs). Exits 1 if a test failed.
// A file still running after `--timeout` minutes (20) fails and is ended, and the others go on: a
// test that hangs (a cluster's node that never answers, a handle left open after a failure) ends
// the run with its name, not the run's time.
//   node scripts/run-tests.mjs --concurrency 4 [--timeout 20] FILE...
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { compose } from 'node:stream';
import { parseArgs } from 'node:util';
import fileTimes from './file-times.mjs';

const { values, positionals: files } = parseArgs({ options: { concurrency: { type: 'string', default: '1' }, timeout: { type: 'string', default: '20' } }, allowPositionals: true });
const tests = run({ files, concurrency: Number(values.concurrency), timeout: Number(values.timeout) * 60_000 });
tests.on('test:fail', (data) => {
  if (!data.todo && !data.skip) process.exitCode = 1;
});
tests.pipe(new spec()).pipe(process.stdout, { end: false });
tests.pipe(compose(fileTimes)).pipe(process.stdout, { end: false });
