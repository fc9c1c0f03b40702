// End to end: the Online Boutique manifests as a kpt package (test/fixtures/real-world/online-boutique), rendered with
// the real `kpt fn render --allow-exec` running bin/meshinject.js as an `exec:` mutator.
//
// kpt re-serialises every file it reads (indentation of sequences, the blank line after a header:
// krm-ecosystem.md G6), so "unchanged" here means: identical to the same package rendered by kpt with a
// no-op `cat` mutator (the baseline). The package is rendered through test/fixtures/real-world/online-boutique/render.mjs.
import t from 'tap';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import {
  ROOT,
  commentCounts,
  commentDiff,
  get,
  idOf,
  injectionProblems,
  makeTempDir,
  runCli,
  runTool,
  skippedProblems,
  splitStream,
  type Obj,
} from '../helpers/e2e.ts';
import { corpus, needs } from '../helpers/data.ts';

const BOUTIQUE = corpus('real-world/online-boutique');
const SRC = `${BOUTIQUE.path}/`;
const MANIFESTS = !BOUTIQUE.path
  ? []
  : readdirSync(SRC)
      .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
      .sort();
const RENDER = join(ROOT, 'test/fixtures/real-world/online-boutique/render.mjs');
const ALL_DEPLOYMENTS = 12;

function git(dir: string, ...args: string[]) {
  return runTool(
    'git',
    ['-c', 'user.email=e2e@example.com', '-c', 'user.name=e2e', '-c', 'commit.gpgsign=false', ...args],
    { cwd: dir },
  );
}

function listFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => !f.startsWith('.'))
    .sort();
}

t.test('online-boutique: kpt fn render with meshinject as an exec mutator', needs(BOUTIQUE), async (t) => {
  const tmp = makeTempDir('boutique');
  t.teardown(tmp.cleanup);

  // Baseline: what kpt itself does to these files with a no-op function.
  const base = join(tmp.dir, 'baseline');
  const setup = runTool(process.execPath, [RENDER, '--setup-only', '--out', base]);
  t.equal(setup.status, 0, `render.mjs --setup-only: ${setup.stderr}`);
  const kptfile = readFileSync(join(base, 'Kptfile'), 'utf8');
  t.match(kptfile, /^ {4}- exec: \/.*\/bin\/meshinject\.js$/m, 'render.mjs writes an absolute exec path (hazard G10)');
  writeFileSync(join(base, 'Kptfile'), kptfile.replace(/- exec: .*/, '- exec: cat'));
  const baseRender = runTool('kpt', ['fn', 'render', base, '--allow-exec']);
  t.equal(baseRender.status, 0, `baseline render: ${baseRender.stderr}`);

  // The example: render.mjs sets the package up and runs kpt fn render.
  const pkg = join(tmp.dir, 'pkg');
  const first = runTool(process.execPath, [RENDER, '--out', pkg]);
  t.equal(first.status, 0, `render.mjs: ${first.stderr}`);
  t.match(first.stderr, /\[PASS\] ".*meshinject\.js"/, 'kpt reports PASS for the meshinject step');
  t.same(listFiles(pkg), [...MANIFESTS, 'Kptfile', 'injection.yaml'].sort(), 'no file renamed, added or lost');

  let injected = 0;
  for (const file of MANIFESTS) {
    const original = readFileSync(join(SRC, file), 'utf8');
    const baseline = readFileSync(join(base, file), 'utf8');
    const out = readFileSync(join(pkg, file), 'utf8');
    t.same(
      commentDiff(commentCounts(original), commentCounts(out)),
      [],
      `${file}: every comment line kept exactly once`,
    );
    t.ok(out.startsWith('# Copyright 20'), `${file}: license header still first`);
    const docsBase = splitStream(baseline);
    const docsOut = splitStream(out);
    t.equal(docsOut.length, docsBase.length, `${file}: same documents`);
    const docsIn = splitStream(original);
    docsBase.forEach((textBase, i) => {
      const objBase = parse(textBase) as Obj;
      const objOut = parse(docsOut[i] ?? '') as Obj;
      if (objBase.kind !== 'Deployment') {
        t.equal(docsOut[i], textBase, `${file}: ${idOf(objBase)} as kpt alone writes it`);
        return;
      }
      const objIn = parse(docsIn[i] ?? '') as Obj;
      t.equal(idOf(objIn), idOf(objBase), 'document order kept');
      if (get(objBase, 'metadata', 'name') === 'loadgenerator') {
        t.same(
          skippedProblems(objOut, { reason: /^skipped \(never-inject-selector\)$/ }),
          [],
          'loadgenerator skipped (neverInjectSelector in injection.yaml)',
        );
      } else {
        t.same(injectionProblems(objOut, objIn), [], `${file}: ${idOf(objBase)} injected and valid`);
        injected++;
      }
      const annotationsOut = get(objOut, 'metadata', 'annotations') as Obj;
      for (const k of Object.keys(annotationsOut ?? {})) {
        t.notOk(
          k.startsWith('internal.config.kubernetes.io/') || k.startsWith('config.k8s.io/'),
          `${k} not leaked into the file`,
        );
      }
    });
  }
  t.equal(injected, ALL_DEPLOYMENTS - 1, 'eleven Deployments injected');
  const kptfileOut = readFileSync(join(pkg, 'Kptfile'), 'utf8');
  t.same(
    commentDiff(
      commentCounts(readFileSync(join(ROOT, 'test/fixtures/real-world/online-boutique/Kptfile'), 'utf8')),
      commentCounts(kptfileOut),
    ),
    [],
    'Kptfile comments kept',
  );

  // Second render of the committed result: nothing changes (idempotent, no comment growth: hazard G4).
  t.equal(git(pkg, 'init', '-q', '.').status, 0);
  t.equal(git(pkg, 'add', '-A').status, 0);
  t.equal(git(pkg, 'commit', '-q', '-m', 'first render').status, 0);
  const results = join(tmp.dir, 'results');
  const second = runTool('kpt', ['fn', 'render', pkg, '--allow-exec', '--results-dir', results]);
  t.equal(second.status, 0, `second render: ${second.stderr}`);
  t.equal(git(pkg, 'status', '--porcelain', '--untracked-files=all').stdout, '', 'second render: git status clean');
  t.equal(git(pkg, 'diff', '--exit-code').status, 0, 'second render: git diff empty');

  // kpt's results file carries one result per workload, from the meshinject step.
  const resultList = parse(readFileSync(join(results, 'results.yaml'), 'utf8')) as Obj;
  t.equal(resultList.exitCode, 0, 'FunctionResultList exitCode 0');
  const fnResults = (get(resultList, 'items', 0, 'results') ?? []) as Obj[];
  const outcomes = fnResults.map(
    (r) => `${String(get(r, 'resourceRef', 'name'))}:${String(get(r, 'tags', 'meshinject.dev/outcome'))}`,
  );
  t.equal(outcomes.filter((o) => o.endsWith(':injected')).length, ALL_DEPLOYMENTS - 1, 'eleven injected results');
  t.ok(outcomes.includes('loadgenerator:skipped'), 'loadgenerator reported as skipped');
  for (const r of fnResults) {
    if (get(r, 'resourceRef', 'kind') === 'Deployment')
      t.match(get(r, 'file', 'path'), /\.yaml$/, 'results name the file');
  }
});

t.test(
  'online-boutique: a relative exec path works only from inside the package (G10, documented)',
  needs(BOUTIQUE),
  async (t) => {
    const tmp = makeTempDir('boutique-g10');
    t.teardown(tmp.cleanup);
    const pkg = join(tmp.dir, 'pkg');
    t.equal(runTool(process.execPath, [RENDER, '--setup-only', '--out', pkg]).status, 0);
    const kptfile = readFileSync(join(pkg, 'Kptfile'), 'utf8').replace(/- exec: .*/, `- exec: ./meshinject.js`);
    writeFileSync(join(pkg, 'Kptfile'), kptfile);
    // A stand-in for a package-local copy of the function: a launcher importing the repo build.
    writeFileSync(
      join(pkg, 'meshinject.js'),
      `#!/usr/bin/env node\nimport ${JSON.stringify(join(ROOT, 'bin/meshinject.js'))};\n`,
      { mode: 0o755 },
    );
    const outside = runTool('kpt', ['fn', 'render', pkg, '--allow-exec'], { cwd: tmp.dir });
    t.not(outside.status, 0, 'from the parent directory kpt cannot find ./meshinject.js');
    t.match(outside.stderr, /no such file or directory/);
    const inside = runTool('kpt', ['fn', 'render', '--allow-exec'], { cwd: pkg });
    t.equal(inside.status, 0, `from inside the package: ${inside.stderr}`);
    t.match(readFileSync(join(pkg, 'frontend.yaml'), 'utf8'), /name: istio-proxy/);
  },
);

// Through the CLI directly (no kpt re-serialising the files), a changed resource keeps the formatting of
// the lines meshinject does not change. The online-boutique files mix indented sequences
// (`drop:\n  - ALL`) with compact ones (`ports:\n- containerPort`) inside one Deployment.

t.test('CLI: a skipped workload differs from its input only by the result annotation', needs(BOUTIQUE), async (t) => {
  const file = join(SRC, 'loadgenerator.yaml');
  const input = readFileSync(file, 'utf8');
  const r = runCli(['--config', 'test/fixtures/real-world/online-boutique/injection.yaml', file]);
  t.equal(r.status, 0);
  const expected = input.replace(
    /^(metadata:\n {2}name: loadgenerator\n {2}labels:\n {4}app: loadgenerator\n)/m,
    '$1  annotations:\n    meshinject.dev/injection: skipped (never-inject-selector)\n',
  );
  t.not(expected, input, 'expectation built');
  t.equal(r.stdout, expected, 'only the annotation added');
});

t.test('CLI: untouched lines of an injected Deployment keep their indentation', needs(BOUTIQUE), async (t) => {
  const file = join(SRC, 'adservice.yaml');
  const r = runCli(['--config', 'test/fixtures/real-world/online-boutique/injection.yaml', file]);
  t.equal(r.status, 0);
  t.match(r.stdout, /^ {10}capabilities:\n {12}drop:\n {14}- ALL\n/m, 'the app container securityContext as written');
});
