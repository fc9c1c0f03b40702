/**
 * A 1 000-file kpt package rendered with `kpt fn render --allow-exec` and a Kptfile `exec:` mutator that
 * runs the built CLI by absolute path. The ResourceList is ≈1 MB, far over the 64 KiB where a Node function
 * that calls `process.exit()` loses stdout and kpt deletes files (krm-ecosystem.md, hazard G1).
 * Checks: no file lost, renamed or truncated; every workload injected; Services unchanged; a second
 * render changes nothing (hazard G4).
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { generateResources } from '../../bench/generate.ts';

const BIN = fileURLToPath(new URL('../../bin/meshinject.js', import.meta.url));
const DIST = fileURLToPath(new URL('../../dist/meshinject.cjs', import.meta.url));

function listFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d)) {
      const p = join(d, e);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(relative(root, p));
    }
  };
  walk(root);
  return out.sort();
}

function snapshot(root: string): Map<string, string> {
  return new Map(listFiles(root).map((f) => [f, readFileSync(join(root, f), 'utf8')]));
}

function hasKpt(): boolean {
  return spawnSync('kpt', ['version'], { encoding: 'utf8' }).status === 0;
}

t.test('kpt fn render of a 1 000-file package', async (t) => {
  if (!hasKpt()) {
    t.fail('kpt is not on PATH');
    return;
  }
  if (!existsSync(DIST)) {
    t.fail('dist/meshinject.cjs is missing: run `npm run build` first');
    return;
  }
  const pkg = mkdtempSync(join(tmpdir(), 'meshinject-kpt-large-'));
  t.teardown(() => rmSync(pkg, { recursive: true, force: true }));

  // 1 000 files: workloads (Deployments, StatefulSets, CronJobs) and Services, one per file.
  const resources = generateResources(700, { kptAnnotations: false, seed: 7 })
    .filter((r) => r.kind !== 'ConfigMap')
    .slice(0, 1000);
  t.equal(resources.length, 1000);
  for (const r of resources) {
    mkdirSync(join(pkg, dirname(r.path)), { recursive: true });
    writeFileSync(join(pkg, r.path), r.text);
  }
  writeFileSync(
    join(pkg, 'Kptfile'),
    `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: large
  annotations:
    config.kubernetes.io/local-config: "true"
pipeline:
  mutators:
  - exec: ${BIN}
    configPath: fn-config.yaml
`,
  );
  const fnConfig = `apiVersion: meshinject.dev/v1alpha1
kind: SidecarInjection
metadata:
  name: injection
  annotations:
    config.kubernetes.io/local-config: "true"
spec:
  mesh: istio
  policy: enabled
`;
  writeFileSync(join(pkg, 'fn-config.yaml'), fnConfig);
  const before = snapshot(pkg);
  t.equal(before.size, 1002, '1 000 resource files + Kptfile + fn-config.yaml');

  const results = mkdtempSync(join(tmpdir(), 'meshinject-kpt-results-'));
  t.teardown(() => rmSync(results, { recursive: true, force: true }));
  const render = () =>
    spawnSync('kpt', ['fn', 'render', pkg, '--allow-exec', '--results-dir', results], {
      encoding: 'utf8',
      timeout: 300_000,
    });

  const r1 = render();
  t.equal(r1.status, 0, r1.status === 0 ? 'kpt fn render exit 0' : `kpt fn render failed:\n${r1.stderr.slice(-2000)}`);
  const after = snapshot(pkg);
  t.same([...after.keys()], [...before.keys()], 'no file lost, added or renamed');
  t.equal(after.get('fn-config.yaml'), fnConfig, 'fn-config.yaml untouched');

  let injected = 0;
  let servicesSame = 0;
  const problems: string[] = [];
  for (const r of resources) {
    const text = after.get(r.path) ?? '';
    const docs = parseAllDocuments(text);
    if (docs.length !== 1 || docs[0]!.errors.length) {
      problems.push(`${r.path}: ${docs.length} documents, errors ${docs[0]?.errors[0]?.message ?? ''}`);
      continue;
    }
    const v = docs[0]!.toJS() as Record<string, any>;
    if (v.kind !== r.kind || v.metadata?.name !== r.name || v.metadata?.namespace !== r.namespace) {
      problems.push(`${r.path}: now ${v.kind} ${v.metadata?.namespace}/${v.metadata?.name}`);
      continue;
    }
    const orig = parseAllDocuments(r.text)[0]!.toJS() as Record<string, any>;
    if (!r.workload) {
      if (JSON.stringify(v) === JSON.stringify(orig)) servicesSame++;
      else problems.push(`${r.path}: Service changed`);
      continue;
    }
    const tmpl = r.kind === 'CronJob' ? v.spec?.jobTemplate?.spec?.template : v.spec?.template;
    const origTmpl = r.kind === 'CronJob' ? orig.spec.jobTemplate.spec.template : orig.spec.template;
    const names: string[] = (tmpl?.spec?.containers ?? []).map((c: { name: string }) => c.name);
    const origNames: string[] = origTmpl.spec.containers.map((c: { name: string }) => c.name);
    const keepsApp = origNames.every((n) => names.includes(n));
    if (names.includes('istio-proxy') && keepsApp) injected++;
    else problems.push(`${r.path}: containers ${names.join(',')}`);
  }
  const workloads = resources.filter((r) => r.workload).length;
  t.equal(injected, workloads, `every workload injected (${workloads})`);
  t.equal(servicesSame, 1000 - workloads, 'every Service unchanged');
  t.same(problems.slice(0, 10), [], 'no file truncated or altered unexpectedly');
  const comments = resources.filter((r) => r.text.includes('# ')).length;
  const keptComments = resources.filter((r) => r.text.includes('# ') && /# /.test(after.get(r.path) ?? '')).length;
  t.equal(keptComments, comments, 'comments survive');

  const resultsFile = readFileSync(join(results, 'results.yaml'), 'utf8');
  t.match(resultsFile, /exitCode: 0/, 'results.yaml records exit 0');

  const r2 = render();
  t.equal(r2.status, 0, r2.status === 0 ? 'second render exit 0' : `second render failed:\n${r2.stderr.slice(-2000)}`);
  const again = snapshot(pkg);
  const changed = [...again.keys()].filter((k) => again.get(k) !== after.get(k));
  t.same(changed.slice(0, 10), [], 'a second render changes no file (idempotent, no comment duplication)');
});
