// The examples run as written after the README's install (issue #23, item 7): `npm install -g .` in the clone
// puts `meshinject` on PATH (a link to the clone), and the kpt packages that say `exec: meshinject` (render) or
// `--exec meshinject` (eval) then run with the real kpt and no stand-ins on PATH. Without the install they fail
// as the issue reported ("executable file not found in $PATH"), which shows the test can fail.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, copyCheckout, makeTempDir } from '../helpers/e2e.ts';
import { copyExample } from '../helpers/runners.ts';

const hasKpt = spawnSync('sh', ['-c', 'command -v kpt']).status === 0;
const SYSTEM_PATH = '/usr/local/bin:/usr/bin:/bin';

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv) {
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

t.test(
  'npm install -g . (into a temporary prefix), then the exec examples as their READMEs write them',
  { skip: !hasKpt && 'kpt is not installed' },
  async (t) => {
    const tmp = makeTempDir('install');
    t.teardown(tmp.cleanup);
    const prefix = join(tmp.dir, 'prefix');
    const home = join(tmp.dir, 'home');
    // NODE_OPTIONS: tap's process tracking adds itself there; a user's shell has none.
    const base: NodeJS.ProcessEnv = {
      HOME: home,
      PATH: `${join(process.execPath, '..')}:${SYSTEM_PATH}`,
      npm_config_cache: join(tmp.dir, 'npm-cache'),
    };
    // In a copy of the checkout: `npm install -g .` runs `prepare`, which rebuilds dist/ where it runs.
    const clone = join(tmp.dir, 'clone');
    copyCheckout(clone);
    const install = run(
      'npm',
      ['install', '-g', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', '.'],
      clone,
      base,
    );
    t.equal(install.status, 0, `npm install -g . : ${install.stderr}`);
    const bin = join(prefix, 'bin');
    t.ok(existsSync(join(bin, 'meshinject')), 'meshinject is on the prefix bin directory');
    const env = { ...base, PATH: `${bin}:${base.PATH}` };
    t.match(
      run('meshinject', ['--version'], tmp.dir, env).stdout,
      /^meshinject \d+\.\d+\.\d+/,
      'and runs by its bare name',
    );

    copyExample(join(ROOT, 'examples/meshinject-exec'), join(tmp.dir, 'meshinject-exec'));
    copyExample(join(ROOT, 'examples/meshinject-imperative'), join(tmp.dir, 'meshinject-imperative'));
    const missing = run('kpt', ['fn', 'render', 'meshinject-exec', '--allow-exec'], tmp.dir, base);
    t.not(missing.status, 0, 'without the install, the exec example fails ...');
    t.match(missing.stderr, /executable file not found in \$PATH/, '... as the issue reported');

    const render = run('kpt', ['fn', 'render', 'meshinject-exec', '--allow-exec'], tmp.dir, env);
    t.equal(render.status, 0, `kpt fn render meshinject-exec --allow-exec: ${render.stderr}`);
    const batch = readFileSync(join(tmp.dir, 'meshinject-exec/batch.yaml'), 'utf8');
    t.match(batch, /name: istio-proxy[\s\S]*restartPolicy: Always/, 'the batch workloads got native sidecars');

    const evalRun = run(
      'kpt',
      [
        'fn',
        'eval',
        'meshinject-imperative',
        '--exec',
        'meshinject',
        '--',
        'istio.revision=canary',
        'resultAnnotations=false',
      ],
      tmp.dir,
      env,
    );
    t.equal(evalRun.status, 0, `kpt fn eval --exec meshinject: ${evalRun.stderr}`);
    t.match(
      readFileSync(join(tmp.dir, 'meshinject-imperative/workloads.yaml'), 'utf8'),
      /istio\.io\/rev: canary/,
      'the imperative example injected the canary revision',
    );
  },
);

t.test('the READMEs name an install that works from a clone', async (t) => {
  for (const f of ['README.md', 'examples/meshinject-exec/README.md', 'functions/meshinject/README.md']) {
    const text = readFileSync(join(ROOT, f), 'utf8');
    t.match(text, /npm install -g \./, `${f} says npm install -g .`);
    t.notMatch(text, /npm install -g meshinject/, `${f} does not name a registry package that is not published`);
  }
});
