// The kpt catalog e2e harness, for examples/meshinject-*: every package with an `.expected/` directory is
// copied to a temp dir, committed to a fresh git repository, run with the real kpt (`kpt fn render`, or
// `kpt fn eval` for `testType: eval`), and the package's `git diff` must equal `.expected/diff.patch`
// byte for byte. Then kpt runs a second time, which must change nothing more (kpt's harness runs every
// case twice: pkg/test/runner, RunCount() == 2). UPDATE_GOLDEN=1 rewrites diff.patch (read it before
// committing it).
//
// `.expected/config.yaml` takes the kpt runner's field names, a subset: testType (render | eval), exitCode,
// allowExec, execPath, image, fnConfig, args (map -> `-- key=value`), stdErrRegEx. Anything else fails.
// Container functions (`image:`) run through the stand-in docker of runner-helpers.ts: the repository's
// bin/meshinject.js in place of the image, which cannot be built here.
import t from 'tap';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ROOT, makeTempDir } from '../helpers/e2e.ts';
import { copyExample, gitDiff, gitSnapshot, makeStandIns, runWith } from '../helpers/runners.ts';

const EXAMPLES = join(ROOT, 'examples');
const IMAGE = `${String((parse(readFileSync(join(ROOT, 'functions/meshinject/metadata.yaml'), 'utf8')) as { image: string }).image)}:v${String(
  (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version,
)}`;
const KNOWN = new Set(['testType', 'exitCode', 'allowExec', 'execPath', 'image', 'fnConfig', 'args', 'stdErrRegEx']);

interface CaseConfig {
  testType?: 'render' | 'eval';
  exitCode?: number;
  allowExec?: boolean;
  execPath?: string;
  image?: string;
  fnConfig?: string;
  args?: Record<string, string>;
  stdErrRegEx?: string;
}

/** The kpt command line of a case (run inside the package directory). */
function kptArgs(c: CaseConfig): string[] {
  if ((c.testType ?? 'render') === 'render') return ['fn', 'render', '.', ...(c.allowExec ? ['--allow-exec'] : [])];
  const fn = c.execPath !== undefined ? ['--exec', c.execPath] : ['--image', c.image ?? ''];
  const config = c.fnConfig !== undefined ? ['--fn-config', c.fnConfig] : [];
  const kv = Object.entries(c.args ?? {}).map(([k, v]) => `${k}=${v}`);
  return ['fn', 'eval', '.', ...fn, ...config, ...(kv.length ? ['--', ...kv] : [])];
}

const packages = readdirSync(EXAMPLES)
  .filter((d) => d.startsWith('meshinject-') && existsSync(join(EXAMPLES, d, '.expected')))
  .sort();

t.ok(packages.length >= 3, `at least three catalog example packages (found ${packages.join(', ')})`);

for (const name of packages) {
  t.test(`examples/${name}`, async (t) => {
    const src = join(EXAMPLES, name);
    const config = (parse(readFileSync(join(src, '.expected/config.yaml'), 'utf8')) ?? {}) as CaseConfig;
    t.same(
      Object.keys(config).filter((k) => !KNOWN.has(k)),
      [],
      '.expected/config.yaml uses only fields this harness implements',
    );
    t.ok(existsSync(join(src, 'Kptfile')), 'a Kptfile (kpt pkg get-able)');
    t.equal(
      readFileSync(join(src, '.krmignore'), 'utf8'),
      '.expected\n',
      '.krmignore keeps .expected away from the functions',
    );
    const tmp = makeTempDir(`kpt-${name}`);
    t.teardown(tmp.cleanup);
    const pkg = join(tmp.dir, name);
    copyExample(src, pkg);
    gitSnapshot(pkg);
    const tools = makeStandIns(tmp.dir);
    const args = kptArgs(config);

    const first = runWith('kpt', args, { cwd: pkg, env: tools.env });
    t.equal(first.status, config.exitCode ?? 0, `kpt ${args.join(' ')}: exit code\n${first.stderr}`);
    if (config.stdErrRegEx !== undefined) t.match(first.stderr, new RegExp(config.stdErrRegEx), 'stderr');
    const diff = gitDiff(pkg);
    const patchFile = join(src, '.expected/diff.patch');
    if (process.env.UPDATE_GOLDEN === '1') writeFileSync(patchFile, diff);
    t.equal(diff, readFileSync(patchFile, 'utf8'), 'the package diff equals .expected/diff.patch');

    const second = runWith('kpt', args, { cwd: pkg, env: tools.env });
    t.equal(second.status, config.exitCode ?? 0, `second run: exit code\n${second.stderr}`);
    t.equal(gitDiff(pkg), diff, 'the second run changes nothing more');

    const kptfile = readFileSync(join(src, 'Kptfile'), 'utf8');
    if (/^\s*- image: /m.test(kptfile) || config.image !== undefined) {
      const calls = readFileSync(tools.dockerLog, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('run '));
      t.equal(calls.length, 2, 'one container run per kpt run');
      t.match(
        calls[0],
        /--network none --user nobody --security-opt=no-new-privileges/,
        'kpt runs the image sandboxed, as user nobody',
      );
      t.ok(calls[0]!.endsWith(` ${IMAGE}`), `the image is the released reference ${IMAGE}`);
    }
  });
}
