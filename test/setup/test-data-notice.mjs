// tap's `after` script: the end-of-run notice about third-party test data (test/helpers/data.ts). Prints how
// many cases of each corpus ran, and one line for the suites skipped because a corpus was missing:
// "N corpus suites skipped: test data not found at <root>". Exits 0: a missing corpus fails the run only under
// CI=true, and there the suite itself has already failed an assertion.
// Then the checkout check: exits 1 (failing the run) when a test changed the checkout's build files while the
// suite ran (test/setup/checkout-fingerprint.mjs).
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { changedFiles, fingerprint } from './checkout-fingerprint.mjs';

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
let checkout;
try {
  checkout = JSON.parse(readFileSync(join(dir, 'checkout.json'), 'utf8'));
} catch {
  checkout = undefined; // a run without the before script
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
if (checkout) {
  const changed = changedFiles(checkout, fingerprint());
  if (changed.length) {
    process.stderr.write(
      `not ok: test files changed the checkout's build while the suite ran (build or install in a copy: test/helpers/e2e.ts copyCheckout): ${changed.join(', ')}\n`,
    );
    process.exitCode = 1;
  }
}
