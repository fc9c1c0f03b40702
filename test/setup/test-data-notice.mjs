// tap's `after` script: the end-of-run notice about third-party test data (test/helpers/data.ts). Prints how
// many cases of each corpus ran, and one line for the suites skipped because a corpus was missing:
// "N corpus suites skipped: test data not found at <root>". Exits 0: a missing corpus fails the run only under
// CI=true, and there the suite itself has already failed an assertion.
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = join(tmpdir(), `meshinject-test-data-${process.ppid}`);
const root = resolve(
  fileURLToPath(new URL('../..', import.meta.url)),
  process.env.MESHINJECT_TEST_DATA || join('..', 'shared'),
);
let lines = [];
try {
  lines = readFileSync(join(dir, 'records.tsv'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split('\t'));
} catch {
  lines = [];
}
rmSync(dir, { recursive: true, force: true });
const ran = new Map(); // corpus -> [suite, count][]
const skipped = new Map(); // suite -> Set of corpora
for (const [kind, suite, sub, count] of lines) {
  if (kind === 'ran') ran.set(sub, [...(ran.get(sub) ?? []), `${suite} ${count}`]);
  if (kind === 'skip') skipped.set(suite, (skipped.get(suite) ?? new Set()).add(sub));
}
const out = [];
if (ran.size) {
  out.push(`test data (${root}): cases run per corpus`);
  for (const [sub, runs] of [...ran].sort()) out.push(`  ${sub}: ${runs.join(', ')}`);
}
if (skipped.size) {
  const corpora = new Set([...skipped.values()].flatMap((s) => [...s]));
  out.push(
    `${skipped.size} corpus suites skipped: test data not found at ${root} (missing: ${[...corpora].sort().join(', ')}; set MESHINJECT_TEST_DATA)`,
  );
}
if (out.length) process.stdout.write(`${out.join('\n')}\n`);
