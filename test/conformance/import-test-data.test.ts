// scripts/import-test-data.mjs (docs/internals/test-data.md): re-importing a corpus of the data folder from an upstream git
// repository at a commit keeps the corpus's own parts and gives a diff of exactly what upstream changed.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, makeTempDir } from '../helpers/e2e.ts';

const SCRIPT = join(ROOT, 'scripts/import-test-data.mjs');
const git = (dir: string, ...args: string[]) =>
  spawnSync('git', ['-C', dir, '-c', 'user.email=t@t', '-c', 'user.name=t', ...args], { encoding: 'utf8' });
const run = (...args: string[]) => spawnSync(process.execPath, [SCRIPT, ...args], { encoding: 'utf8' });

/** An upstream repository with one input and one golden, committed twice (v1, then v2 of the golden). */
function upstream(dir: string): { v1: string; v2: string } {
  const data = join(dir, 'pkg/injector/testdata');
  mkdirSync(data, { recursive: true });
  git(dir, 'init', '-q');
  writeFileSync(join(data, 'inject.01.input.yaml'), 'kind: Pod\nmetadata: {name: a}\n');
  writeFileSync(join(data, 'inject.01.golden.yaml'), 'kind: Pod # v1\n');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'v1');
  const v1 = git(dir, 'rev-parse', 'HEAD').stdout.trim();
  writeFileSync(join(data, 'inject.01.golden.yaml'), 'kind: Pod # v2\n');
  git(dir, 'commit', '-qam', 'v2');
  return { v1, v2: git(dir, 'rev-parse', 'HEAD').stdout.trim() };
}

/** A data folder with a Kuma-style corpus pinned at `commit`: one upstream case and one derived case. */
function vendored(dir: string, commit: string): string {
  const corpus = join(dir, 'conformance/kuma');
  const one = join(corpus, 'cases/inject-01');
  const derived = join(corpus, 'cases/precheck-x');
  mkdirSync(one, { recursive: true });
  mkdirSync(derived, { recursive: true });
  writeFileSync(join(corpus, 'SOURCE.md'), `| commit | \`${commit}\` |\n`);
  writeFileSync(
    join(one, 'case.yaml'),
    "source: 'kumahq/kuma pkg/injector/testdata/inject.01.input.yaml -> inject.01.golden.yaml (row 0)'\n",
  );
  writeFileSync(join(one, 'input.yaml'), 'kind: Namespace # ours\n---\nold input\n');
  writeFileSync(join(one, 'expected.yaml'), 'kind: Namespace # ours\n---\nold golden\n');
  writeFileSync(join(derived, 'case.yaml'), "source: 'kumahq/kuma pkg/injector/injector_test.go (a Go literal)'\n");
  writeFileSync(join(derived, 'input.yaml'), 'derived\n');
  return one;
}

t.test('refresh: upstream files at the pinned commit, the corpus Namespace kept, derived cases kept', async (t) => {
  const tmp = makeTempDir('import-test-data');
  t.teardown(tmp.cleanup);
  const { v1, v2 } = upstream(join(tmp.dir, 'up'));
  const one = vendored(join(tmp.dir, 'vendored'), v1);
  const r = run('refresh', 'kuma', '--from', join(tmp.dir, 'up'), '--into', join(tmp.dir, 'vendored'));
  t.equal(r.status, 0, r.stderr);
  t.equal(
    readFileSync(join(one, 'input.yaml'), 'utf8'),
    'kind: Namespace # ours\n---\nkind: Pod\nmetadata: {name: a}\n',
  );
  t.equal(
    readFileSync(join(one, 'expected.yaml'), 'utf8'),
    'kind: Namespace # ours\n---\nkind: Pod # v1\n',
    'the pinned commit, not the newest',
  );
  t.match(r.stdout, /2 file\(s\) updated, 0 unchanged, 1 derived case\(s\) kept, 0 missing upstream/);
  t.equal(readFileSync(join(tmp.dir, 'vendored/conformance/kuma/cases/precheck-x/input.yaml'), 'utf8'), 'derived\n');

  const again = run(
    'refresh',
    'kuma',
    '--from',
    join(tmp.dir, 'up'),
    '--into',
    join(tmp.dir, 'vendored'),
    '--commit',
    v2,
  );
  t.equal(again.status, 0, again.stderr);
  t.equal(readFileSync(join(one, 'expected.yaml'), 'utf8'), 'kind: Namespace # ours\n---\nkind: Pod # v2\n');
  t.match(again.stdout, /1 file\(s\) updated, 1 unchanged/);
  t.match(again.stdout, /update the commit row of .*SOURCE\.md/);
});

t.test('refresh: a commit the upstream clone lacks, or a missing file, is exit 2 naming it', async (t) => {
  const tmp = makeTempDir('import-test-data');
  t.teardown(tmp.cleanup);
  upstream(join(tmp.dir, 'up'));
  vendored(join(tmp.dir, 'vendored'), 'deadbeefdeadbeef');
  const r = run('refresh', 'kuma', '--from', join(tmp.dir, 'up'), '--into', join(tmp.dir, 'vendored'));
  t.equal(r.status, 2);
  t.match(r.stderr, /commit deadbeefdeadbeef is not in/);
  const unknown = run('refresh', 'nomesh', '--from', join(tmp.dir, 'up'), '--into', join(tmp.dir, 'vendored'));
  t.equal(unknown.status, 2);
  t.match(unknown.stderr, /unknown corpus nomesh/);
});

t.test('copy: a corpus must say where it comes from', async (t) => {
  const tmp = makeTempDir('import-test-data');
  t.teardown(tmp.cleanup);
  mkdirSync(join(tmp.dir, 'from/conformance/newmesh/cases'), { recursive: true });
  mkdirSync(join(tmp.dir, 'into'), { recursive: true });
  const r = run('copy', '--from', join(tmp.dir, 'from'), '--only', 'conformance', '--into', join(tmp.dir, 'into'));
  t.equal(r.status, 2);
  t.match(r.stderr, /newmesh has no SOURCE\.md or README\.md/);
  writeFileSync(join(tmp.dir, 'from/conformance/newmesh/SOURCE.md'), '# from somewhere\n');
  const ok = run('copy', '--from', join(tmp.dir, 'from'), '--only', 'conformance', '--into', join(tmp.dir, 'into'));
  t.equal(ok.status, 0, ok.stderr);
  t.equal(readFileSync(join(tmp.dir, 'into/conformance/newmesh/SOURCE.md'), 'utf8'), '# from somewhere\n');
});

t.test('the data folder is named, and never inside the repository', async (t) => {
  const tmp = makeTempDir('import-test-data');
  t.teardown(tmp.cleanup);
  upstream(join(tmp.dir, 'up'));
  const none = run('refresh', 'kuma', '--from', join(tmp.dir, 'up'));
  t.equal(none.status, 2, 'no --into: usage error');
  t.match(none.stderr, /--into <data dir>/);
  for (const into of [ROOT, join(ROOT, 'test'), join(ROOT, 'test/data')]) {
    const r = run('copy', '--from', join(tmp.dir, 'up'), '--into', into);
    t.equal(r.status, 2, `--into ${into}: refused`);
    t.match(r.stderr, /inside the repository/);
  }
  t.notOk(existsSync(join(ROOT, 'test/data')), 'nothing written into the repository');
});
