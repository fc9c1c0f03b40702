// The nested tap runs of test/house/test-data.test.ts and test/security/rotating-seed.test.ts
// (test/helpers/nested-tap.ts): they start clean of the running tap's environment, a run that tap ended before
// any test file is run once more with the first run reported, and a failure message says how the run ended.
import t from 'tap';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers/e2e.ts';
import {
  endedBeforeAnyFile,
  nestedTapReport,
  ownProjectRoot,
  runNestedTap,
  setByRunningTap,
} from '../helpers/nested-tap.ts';

t.test("the running tap's variables are not passed on", async (t) => {
  for (const k of ['TAP', 'TAP_BEFORE', 'TAP_CHILD_ID', '_TAPJS_PROCESSINFO_CWD_', 'NODE_OPTIONS'])
    t.ok(setByRunningTap(k), k);
  for (const k of ['PATH', 'HOME', 'CI', 'MESHINJECT_PLANS', 'NODE_EXTRA_CA_CERTS']) t.notOk(setByRunningTap(k), k);
  t.ok(process.env.TAP, 'this file runs under tap, so the nested run below starts from a tap environment');
});

t.test('a run whose before script fails is run once more, and stays failed', async (t) => {
  const reports: string[] = [];
  const r = runNestedTap(['test/yaml/text-edit.test.ts'], { TAP_BEFORE: 'test/setup/no-such-script.mjs' }, [], (m) =>
    reports.push(m),
  );
  t.equal(reports.length, 1, 'retried once');
  t.not(r.status, 0, 'the second run fails too');
  t.ok(endedBeforeAnyFile(r), 'and ran no file');
  t.match(reports[0], /^exit \d+\n./, 'the first run is reported with its exit code and output');
  // What ended the run (node's "Cannot find module" for the script) is the last thing it printed, on stderr,
  // after tap's "test unfinished" failure: the report keeps the end of the output.
  const second = nestedTapReport(r, 3000);
  t.match(
    second,
    /^exit \d+\n[\s\S]*not ok 1 - test unfinished[\s\S]*no-such-script/,
    `a report names the cause: ${second}`,
  );
  if (!/no-such-script/.test(reports[0] ?? '')) t.comment(`the first run ended otherwise: ${reports[0]}`);
});

t.test('endedBeforeAnyFile and nestedTapReport', async (t) => {
  const ran = '# Subtest: test/a.test.ts\n    not ok 1 - x\n      wanted: 1\nnot ok 1 - test/a.test.ts\n';
  t.notOk(endedBeforeAnyFile({ status: 1, signal: null, out: ran, error: undefined }), 'a file ran');
  t.notOk(endedBeforeAnyFile({ status: 0, signal: null, out: '', error: undefined }), 'a pass');
  t.ok(endedBeforeAnyFile({ status: null, signal: 'SIGKILL', out: 'TAP version 14\n', error: undefined }));
  t.match(nestedTapReport({ status: 1, signal: null, out: ran, error: undefined }), /^exit 1\n {4}not ok 1 - x\n/);
  t.match(
    nestedTapReport({ status: null, signal: 'SIGTERM', out: 'tail', error: undefined }),
    /^ended by SIGTERM\ntail$/,
  );
  t.match(nestedTapReport({ status: null, signal: null, out: '', error: 'spawnSync tap ENOENT' }), /^could not run: /);
  t.equal(nestedTapReport({ status: 1, signal: null, out: 'y'.repeat(10_000), error: undefined }, 100).length, 100);
  // Failed assertions, then however many lines after them, then the cause on stderr: the cause is still there.
  const long = `not ok 1 - test unfinished\n${'  line\n'.repeat(200)}Error: Cannot find module 'x/cause.mjs'\n`;
  const report = nestedTapReport({ status: 1, signal: null, out: long, error: undefined }, 1000);
  t.match(report, /^exit 1\nnot ok 1 - test unfinished\n[\s\S]*cause\.mjs'\n$/, 'the end of the output is kept');
  t.ok(report.length <= 1000, 'within the limit');
});

t.test("a nested run keeps to its own project root: the running tap's .tap/processinfo is left alone", async (t) => {
  // tap deletes `.tap/processinfo` under its project root as it starts, while the running suite's processes write
  // their records there as they exit: in the checkout, the delete failed (ENOTEMPTY) and ended a nested run early.
  const own = ownProjectRoot();
  t.teardown(own.cleanup);
  const planted = join(own.dir, '.tap', 'processinfo', 'planted.json');
  mkdirSync(join(own.dir, '.tap', 'processinfo'), { recursive: true });
  writeFileSync(planted, '{}\n');
  const inOwn = runNestedTap(['test/yaml/text-edit.test.ts'], {}, [], () => {}, own.dir);
  t.equal(inOwn.status, 0, `the run passes: ${inOwn.status === 0 ? 'it did' : nestedTapReport(inOwn, 3000)}`);
  t.notOk(existsSync(planted), 'tap clears the processinfo folder of the root it runs from');
  t.ok(existsSync(join(own.dir, '.tap', 'test-results', 'test', 'yaml', 'text-edit.test.ts.tap')), 'and writes there');

  const mine = join(ROOT, '.tap', 'processinfo', `nested-tap-test-${process.pid}.json`);
  mkdirSync(join(ROOT, '.tap', 'processinfo'), { recursive: true });
  writeFileSync(mine, '{}\n');
  t.teardown(() => rmSync(mine, { force: true }));
  const r = runNestedTap(['test/yaml/text-edit.test.ts'], {});
  t.equal(r.status, 0, `the run passes: ${r.status === 0 ? 'it did' : nestedTapReport(r, 3000)}`);
  t.ok(existsSync(mine), "a nested run from its own root leaves the checkout's .tap/processinfo alone");
});

t.test('no test starts tap but through the nested-tap helper', async (t) => {
  const files = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? files(join(dir, e.name)) : /\.(ts|mjs|js)$/.test(e.name) ? [join(dir, e.name)] : [],
    );
  const starts = files('test').filter(
    (f) =>
      f !== join('test', 'helpers', 'nested-tap.ts') &&
      /\.bin\/tap\b|@tapjs\/run/.test(readFileSync(join(ROOT, f), 'utf8')),
  );
  t.same(starts, [], 'only test/helpers/nested-tap.ts names the tap binary');
});
