// Third-party test data is read from the data root, never from the repository (issue #34, docs/internals/test-data.md,
// docs/internals/test-data.md). Run as a user runs the suite: the real tap on real test files, with the data
// root missing (skips naming the folder, one notice at the end, exit 0), missing under CI=true (a failure), and
// present (the cases each corpus ran are counted at the end).
import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, makeTempDir, runTool } from '../helpers/e2e.ts';
import { corpus, DATA_ROOT, needs } from '../helpers/data.ts';
import { nestedTapReport, runNestedTap } from '../helpers/nested-tap.ts';

const LINKERD = corpus('conformance/linkerd');

/** Runs tap on `files` with `env` over the test's own environment (CI and the data root cleared first). */
const tap = (files: string[], env: Record<string, string>) =>
  runNestedTap(files, env, ['CI', 'MESHINJECT_TEST_DATA', 'MESHINJECT_TEST_FAST']);

t.test('no data root: each corpus test skipped naming the folder, one notice at the end, exit 0', async (t) => {
  const tmp = makeTempDir('no-data');
  t.teardown(tmp.cleanup);
  const missing = join(tmp.dir, 'nothing-here');
  const r = tap(['test/drivers/istio/defaults.test.ts', 'test/drivers/linkerd/uninject.test.ts'], {
    MESHINJECT_TEST_DATA: missing,
  });
  t.equal(r.status, 0, `the run passes: ${r.status === 0 ? 'it did' : nestedTapReport(r, 3000)}`);
  t.match(
    r.out,
    `# SKIP test data not found: ${missing}/conformance/istio/chart-defaults`,
    'the skip names the folder',
  );
  t.match(r.out, `# SKIP test data not found: ${missing}/conformance/linkerd`);
  t.match(r.out, `2 corpus suites skipped: test data not found at ${missing}`, 'one notice counts the suites');
  t.match(r.out, /ok \d+ - mergeValues/, 'the tests that need no corpus still run');
});

t.test('no data root under CI=true: a failure naming the folder', async (t) => {
  const tmp = makeTempDir('no-data-ci');
  t.teardown(tmp.cleanup);
  const missing = join(tmp.dir, 'nothing-here');
  const r = tap(['test/drivers/istio/defaults.test.ts'], { MESHINJECT_TEST_DATA: missing, CI: 'true' });
  t.not(r.status, 0, 'the run fails');
  t.equal(r.signal, null, `it ends by itself: ${nestedTapReport(r, 3000)}`);
  t.match(
    r.out,
    `not ok 1 - CI=true: every corpus must be present; test data not found: ${missing}/conformance/istio/chart-defaults`,
  );
});

t.test('data root present: the cases each corpus ran are counted at the end', needs(LINKERD), async (t) => {
  const r = tap(['test/drivers/linkerd/uninject.test.ts'], { MESHINJECT_TEST_DATA: DATA_ROOT, CI: 'true' });
  t.equal(r.status, 0, `the run passes: ${r.status === 0 ? 'it did' : nestedTapReport(r, 3000)}`);
  t.match(r.out, `test data (${DATA_ROOT}): cases run per corpus`);
  t.match(r.out, /conformance\/linkerd \(uninject\): test\/drivers\/linkerd\/uninject\.test\.ts 13/);
  t.notMatch(r.out, /corpus suites skipped/);
});

t.test('the repository holds no copy of the test data', async (t) => {
  const tracked = runTool('git', ['ls-files']).stdout.split('\n').filter(Boolean);
  t.notOk(
    tracked.some((f) => f.startsWith('test/vendored/')),
    'nothing under test/vendored',
  );
  if (!existsSync(DATA_ROOT)) return;
  // Byte-identical files: the same size and text as a file of the data root (files over 200 bytes, as the
  // shared before-stop check counts them).
  const bySize = new Map<number, string[]>();
  for (const f of runTool('find', [DATA_ROOT, '-type', 'f', '-size', '+200c']).stdout.split('\n').filter(Boolean)) {
    const size = readFileSync(f).length;
    bySize.set(size, [...(bySize.get(size) ?? []), f]);
  }
  const copies = tracked.filter((f) => {
    const p = join(ROOT, f);
    if (!existsSync(p)) return false;
    const text = readFileSync(p);
    return (bySize.get(text.length) ?? []).some((d) => readFileSync(d).equals(text));
  });
  t.same(copies, [], 'no tracked file is byte-identical to a file of the test data');
});
