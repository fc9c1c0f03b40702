/**
 * Issue #39, item 4: every kpt example package renders as written, with the real kpt, both from the repository
 * root (`kpt fn render examples/NAME`) and from its own folder (`kpt fn render .`), with meshinject installed
 * on PATH (`npm install -g`; here a stand-in on PATH that runs bin/meshinject.js, and the stand-in docker for
 * image functions: test/helpers/runners.ts). The class is made impossible by a scan: no example names
 * meshinject by a relative path, which kpt would resolve against its own working directory.
 */
import t from 'tap';
import { mkdirSync, readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ROOT, makeTempDir } from '../helpers/e2e.ts';
import { copyExample, makeStandIns, runWith } from '../helpers/runners.ts';

const EXAMPLES = join(ROOT, 'examples');

/** Every example folder with a Kptfile (a kpt package), by name. */
const packages = readdirSync(EXAMPLES, { withFileTypes: true })
  .filter((e) => e.isDirectory() && existsSync(join(EXAMPLES, e.name, 'Kptfile')))
  .map((e) => e.name)
  .sort();

/** The functions of a Kptfile's pipeline. */
function functionsOf(name: string): Array<{ exec?: string; image?: string }> {
  const k = parse(readFileSync(join(EXAMPLES, name, 'Kptfile'), 'utf8')) as {
    pipeline?: { mutators?: unknown[]; validators?: unknown[] };
  };
  return [...(k.pipeline?.mutators ?? []), ...(k.pipeline?.validators ?? [])] as Array<{
    exec?: string;
    image?: string;
  }>;
}

t.test('no example names meshinject by a path relative to where kpt or kustomize runs', async (t) => {
  t.ok(packages.length >= 5, `kpt packages found: ${packages.join(', ')}`);
  for (const name of packages) {
    for (const f of functionsOf(name))
      if (f.exec !== undefined) t.equal(f.exec, 'meshinject', `examples/${name}/Kptfile: exec is the name on PATH`);
  }
});

t.test('every kpt example renders the same from the repository root and from its own folder', async (t) => {
  const { dir, cleanup } = makeTempDir('anywhere');
  t.teardown(cleanup);
  const repo = join(dir, 'repo');
  mkdirSync(repo);
  copyExample(EXAMPLES, join(repo, 'examples'));
  const s = makeStandIns(dir);
  for (const name of packages) {
    // A package without a pipeline is run as its README runs it: `kpt fn eval PKG --exec meshinject -- key=value`.
    const imperative = functionsOf(name).length === 0;
    const args = (pkg: string) =>
      imperative
        ? ['fn', 'eval', pkg, '--exec', 'meshinject', '--output', 'stdout', '--', 'istio.revision=canary']
        : ['fn', 'render', pkg, '--allow-exec', '--output', 'stdout'];
    const fromRoot = runWith('kpt', args(`examples/${name}`), { cwd: repo, env: s.env });
    t.equal(fromRoot.status, 0, `${name} from the root: ${fromRoot.stderr}`);
    const fromFolder = runWith('kpt', args('.'), { cwd: join(repo, 'examples', name), env: s.env });
    t.equal(fromFolder.status, 0, `${name} from its folder: ${fromFolder.stderr}`);
    t.match(fromRoot.stdout, /meshinject\.dev\/injection: .*injected/, `${name}: something is injected`);
    // kpt writes each resource's path relative to the package, so the two renders are the same stream.
    t.equal(fromFolder.stdout, fromRoot.stdout, `${name}: the same output from both places`);
  }
});
