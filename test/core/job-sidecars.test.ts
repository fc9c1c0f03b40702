// Jobs and CronJobs with a classic sidecar never complete (issue #23, item 3; linkerd2#5188, #7425): each one
// given a classic sidecar gets a warning saying what to do; `spec.kindPolicies` chooses per kind: inject, native
// (only as a native sidecar, else skipped with a warning), skip. Runs the built CLI.
import t from 'tap';
import { parseAllDocuments } from 'yaml';
import { get, runCli, workspace, type Obj } from '../helpers/e2e.ts';

const pod = (name: string) =>
  `    metadata: {labels: {app: ${name}}}\n    spec:\n      restartPolicy: Never\n      containers:\n      - {name: ${name}, image: ${name}:1}\n`;
const JOB = `apiVersion: batch/v1\nkind: Job\nmetadata: {name: migrate, namespace: shop}\nspec:\n  template:\n${pod('migrate')}`;
const CRON = `apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: report, namespace: shop}\nspec:\n  schedule: "0 3 * * *"\n  jobTemplate:\n    spec:\n      template:\n${pod('report').replace(/^/gm, '    ').replace(/^ +$/gm, '')}`;
const DEPLOY = `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n${pod('web').replace('restartPolicy: Never', 'restartPolicy: Always')}`;
const INPUT = [JOB, CRON, DEPLOY].join('---\n');
const cfg = (spec: string) =>
  `apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: c}\nspec:\n${spec}`;

function specOf(o: Obj): Obj {
  return (
    o.kind === 'CronJob'
      ? get(o, 'spec', 'jobTemplate', 'spec', 'template', 'spec')
      : get(o, 'spec', 'template', 'spec')
  ) as Obj;
}
/** Per resource name: native / classic / none (where `proxy` went). */
function placements(stream: string, proxy = 'istio-proxy'): Record<string, string> {
  const out: Record<string, string> = {};
  for (const d of parseAllDocuments(stream)) {
    const o = d.toJS() as Obj;
    const spec = specOf(o);
    const native = ((spec.initContainers ?? []) as Obj[]).some((c) => c.name === proxy && c.restartPolicy === 'Always');
    const classic = ((spec.containers ?? []) as Obj[]).some((c) => c.name === proxy);
    out[get(o, 'metadata', 'name') as string] = native ? 'native' : classic ? 'classic' : 'none';
  }
  return out;
}
const warningsOf = (stderr: string) => stderr.split('\n').filter((l) => l.startsWith('[warning]'));

t.test('classic sidecars: a warning on each Job and CronJob, saying what to do; none on a Deployment', async (t) => {
  const dir = workspace(t, { 'in.yaml': INPUT });
  const r = runCli(['in.yaml'], { cwd: dir });
  t.equal(r.status, 0, r.stderr);
  t.same(placements(r.stdout), { migrate: 'classic', report: 'classic', web: 'classic' });
  const w = warningsOf(r.stderr);
  t.equal(w.length, 2, w.join('\n'));
  t.match(
    w[0],
    /^\[warning\] batch\/v1\/Job\/shop\/migrate: Job gets a classic sidecar \(container istio-proxy\).*never completes.*spec\.nativeSidecars: true.*spec\.kindPolicies\.Job: native.*spec\.kindPolicies\.Job: skip/,
  );
  t.match(
    w[1],
    /^\[warning\] batch\/v1\/CronJob\/shop\/report: CronJob gets a classic sidecar.*spec\.kindPolicies\.CronJob: skip/,
  );
});

t.test('native sidecars: no warning', async (t) => {
  const dir = workspace(t, { 'c.yaml': cfg('  nativeSidecars: true\n'), 'in.yaml': INPUT });
  const r = runCli(['-c', 'c.yaml', 'in.yaml'], { cwd: dir });
  t.equal(r.status, 0, r.stderr);
  t.same(placements(r.stdout), { migrate: 'native', report: 'native', web: 'native' });
  t.same(warningsOf(r.stderr), []);
});

t.test('a pod that opts out of native sidecars is warned about again', async (t) => {
  const optOut = JOB.replace(
    'metadata: {labels: {app: migrate}}',
    'metadata: {labels: {app: migrate}, annotations: {sidecar.istio.io/nativeSidecar: "false"}}',
  );
  const dir = workspace(t, { 'c.yaml': cfg('  nativeSidecars: true\n'), 'in.yaml': optOut });
  const r = runCli(['-c', 'c.yaml', 'in.yaml'], { cwd: dir });
  t.same(placements(r.stdout), { migrate: 'classic' });
  t.equal(warningsOf(r.stderr).length, 1);
});

t.test('kindPolicies: Job native, CronJob skip; other kinds as configured', async (t) => {
  const dir = workspace(t, { 'c.yaml': cfg('  kindPolicies: {Job: native, CronJob: skip}\n'), 'in.yaml': INPUT });
  const r = runCli(['-c', 'c.yaml', 'in.yaml'], { cwd: dir, env: { LOG_TO_STDERR: 'true' } });
  t.equal(r.status, 0, r.stderr);
  t.same(placements(r.stdout), { migrate: 'native', report: 'none', web: 'classic' });
  t.same(warningsOf(r.stderr), [], 'nothing left to warn about');
  t.match(
    r.stderr,
    /\[info\] batch\/v1\/CronJob\/shop\/report: skipped \(kind-policy\): spec\.kindPolicies\.CronJob is skip/,
  );
  t.match(r.stdout, /meshinject\.dev\/injection: skipped \(kind-policy\)/, 'the result annotation says so');
});

t.test('kindPolicies native where the mesh cannot: skipped with a warning (OSM has no native sidecars)', async (t) => {
  const dir = workspace(t, {
    'c.yaml': cfg(
      '  mesh: osm\n  policy: enabled\n  kindPolicies: {Job: native}\n  namespaces: [{name: shop, labels: {openservicemesh.io/monitored-by: osm}}]\n',
    ),
    'in.yaml': [JOB, DEPLOY].join('---\n'),
  });
  const r = runCli(['-c', 'c.yaml', 'in.yaml'], { cwd: dir });
  t.equal(r.status, 0, r.stderr);
  t.same(placements(r.stdout, 'envoy'), { migrate: 'none', web: 'classic' });
  t.match(
    r.stderr,
    /\[warning\] batch\/v1\/Job\/shop\/migrate: skipped \(kind-policy\): spec\.kindPolicies\.Job is native, but osm injects a classic sidecar here \(container envoy\)/,
  );
});

t.test('kindPolicies native with Linkerd values that say classic', async (t) => {
  const linkerd =
    '  mesh: linkerd\n  kindPolicies: {Job: native}\n  linkerd:\n    manual: true\n    values: {proxy: {nativeSidecar: false}, identityTrustAnchorsPEM: "-----BEGIN CERTIFICATE-----\\nMIIB\\n-----END CERTIFICATE-----"}\n';
  const dir = workspace(t, { 'c.yaml': cfg(linkerd), 'in.yaml': [JOB, DEPLOY].join('---\n') });
  const r = runCli(['-c', 'c.yaml', 'in.yaml'], { cwd: dir });
  t.equal(r.status, 0, r.stderr);
  t.same(placements(r.stdout, 'linkerd-proxy'), { migrate: 'native', web: 'classic' });
});

t.test('the ConfigMap form, and invalid policies named', async (t) => {
  const dir = workspace(t, {
    'cm.yaml':
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {kindPolicies: "Job=skip, CronJob=native"}\n',
    'bad.yaml': cfg('  kindPolicies: {Job: never, job: skip}\n'),
    'badcm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {kindPolicies: "Job:skip"}\n',
    'in.yaml': INPUT,
  });
  const r = runCli(['-c', 'cm.yaml', 'in.yaml'], { cwd: dir });
  t.equal(r.status, 0, r.stderr);
  t.same(placements(r.stdout), { migrate: 'none', report: 'native', web: 'classic' });
  const bad = runCli(['-c', 'bad.yaml', 'in.yaml'], { cwd: dir });
  t.equal(bad.status, 1);
  t.match(bad.stderr, /spec\.kindPolicies\.Job must be one of inject, native, skip; got "never"/);
  t.match(bad.stderr, /spec\.kindPolicies must be a Kubernetes kind .*; got "job"/);
  t.equal(bad.stdout, '');
  const badcm = runCli(['-c', 'badcm.yaml', 'in.yaml'], { cwd: dir });
  t.equal(badcm.status, 1);
  t.match(badcm.stderr, /data\.kindPolicies must be comma-separated KIND=inject\|native\|skip pairs/);
});
