// `nativeSidecars: auto` (issue #23, item 4): native sidecars as the mesh's own injector decides for the cluster's
// Kubernetes version, given by --kube-version or KUBE_VERSION (Argo CD's build environment for config management
// plugins). Istio >= 1.27 from Kubernetes 1.33 (ENABLE_NATIVE_SIDECARS=auto), Linkerd's chart default from 1.29;
// an unknown version means classic sidecars and an info result saying why. The Argo CD case runs the directory
// plugin's generate command of examples/argocd as argocd-cmp-server runs it, with its build environment.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { ROOT, get, makeTempDir, runCli, workspace, type Obj } from '../helpers/e2e.ts';
import { copyExample, makeStandIns } from '../helpers/runners.ts';

const JOB = `apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: shop}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: migrate, image: migrate:1}
`;
const auto = (extra = '') =>
  `apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: a}\nspec:\n  nativeSidecars: auto\n${extra}`;
const LINKERD = `  mesh: linkerd\n  linkerd:\n    manual: true\n    values: {identityTrustAnchorsPEM: "-----BEGIN CERTIFICATE-----\\nMIIB\\n-----END CERTIFICATE-----"}\n`;

/** Where the proxy went: `native` (an init container with restartPolicy Always), `classic` (a container), or none. */
function placement(stream: string, proxy: string): string {
  const job = parseAllDocuments(stream)
    .map((d) => d.toJS() as Obj)
    .find((o) => o.kind === 'Job' || o.kind === 'CronJob')!;
  const spec = (
    job.kind === 'CronJob'
      ? get(job, 'spec', 'jobTemplate', 'spec', 'template', 'spec')
      : get(job, 'spec', 'template', 'spec')
  ) as Obj;
  const init = ((spec.initContainers ?? []) as Obj[]).find((c) => c.name === proxy);
  if (init) return init.restartPolicy === 'Always' ? 'native' : 'init-without-restart';
  return ((spec.containers ?? []) as Obj[]).some((c) => c.name === proxy) ? 'classic' : 'none';
}

function infoLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l.startsWith('[info] functionConfig: spec.nativeSidecars: auto'));
}

t.test('Istio (built-in 1.31): native from Kubernetes 1.33, from either source; --kube-version wins', async (t) => {
  const dir = workspace(t, { 'cfg.yaml': auto(), 'job.yaml': JOB });
  const cases: Array<[Record<string, string>, string[], string]> = [
    [{ KUBE_VERSION: '1.33.0' }, [], 'native'],
    [{ KUBE_VERSION: 'v1.34.2-eks-1234' }, [], 'native'],
    [{ KUBE_VERSION: '1.32.9' }, [], 'classic'],
    [{}, ['--kube-version', '1.33'], 'native'],
    [{ KUBE_VERSION: '1.33.0' }, ['--kube-version', '1.32'], 'classic'],
    [{ ARGOCD_ENV_KUBE_VERSION: '1.33' }, [], 'native'],
  ];
  for (const [env, flags, want] of cases) {
    const r = runCli(['-c', 'cfg.yaml', ...flags, 'job.yaml'], { cwd: dir, env: { ...env, LOG_TO_STDERR: 'true' } });
    t.equal(r.status, 0, r.stderr);
    t.equal(placement(r.stdout, 'istio-proxy'), want, `${JSON.stringify(env)} ${flags.join(' ')}: ${want}`);
    const info = infoLines(r.stderr);
    t.equal(info.length, 1, 'one info result says which and why');
    t.match(
      info[0],
      new RegExp(
        `auto: ${want} sidecars: Kubernetes 1\\.3\\d \\((--kube-version|KUBE_VERSION|ARGOCD_ENV_KUBE_VERSION)\\); Istio 1\\.31\\.0`,
      ),
    );
  }
});

t.test(
  'an unknown version means classic sidecars, and an info result says why; an unreadable one is a usage error',
  async (t) => {
    const dir = workspace(t, { 'cfg.yaml': auto(), 'job.yaml': JOB });
    const none = runCli(['-c', 'cfg.yaml', 'job.yaml'], { cwd: dir, env: { LOG_TO_STDERR: 'true' } });
    t.equal(placement(none.stdout, 'istio-proxy'), 'classic');
    t.match(
      infoLines(none.stderr)[0],
      /classic sidecars: the cluster's Kubernetes version is unknown \(give --kube-version, or KUBE_VERSION/,
    );
    // Issue #39: a malformed KUBE_VERSION is exit 2 naming it (test/cli-uninject-kube-version.test.ts covers every route).
    const bad = runCli(['-c', 'cfg.yaml', 'job.yaml'], {
      cwd: dir,
      env: { LOG_TO_STDERR: 'true', KUBE_VERSION: 'latest' },
    });
    t.equal(bad.status, 2);
    t.equal(bad.stdout, '');
    t.match(bad.stderr, /KUBE_VERSION must be a Kubernetes version: .*got "latest"/);
  },
);

t.test('Istio before 1.27 (ENABLE_NATIVE_SIDECARS defaulted to false): classic even on 1.34', async (t) => {
  const dir = workspace(t, { 'cfg.yaml': auto('  istio: {version: 1.26.0}\n'), 'job.yaml': JOB });
  const r = runCli(['-c', 'cfg.yaml', '--kube-version', '1.34', 'job.yaml'], {
    cwd: dir,
    env: { LOG_TO_STDERR: 'true' },
  });
  t.equal(r.status, 0, r.stderr);
  t.equal(placement(r.stdout, 'istio-proxy'), 'classic');
  t.match(
    infoLines(r.stderr)[0],
    /classic sidecars: Istio 1\.26\.0: ENABLE_NATIVE_SIDECARS defaults to false before 1\.27/,
  );
  const v127 = workspace(t, { 'cfg.yaml': auto('  istio: {version: 1.27.0}\n'), 'job.yaml': JOB });
  t.equal(
    placement(runCli(['-c', 'cfg.yaml', '--kube-version', '1.33', 'job.yaml'], { cwd: v127 }).stdout, 'istio-proxy'),
    'native',
    'Istio 1.27 on 1.33: native',
  );
});

t.test('Linkerd: native from Kubernetes 1.29 (its chart default); classic where the values say so', async (t) => {
  const dir = workspace(t, { 'cfg.yaml': auto(LINKERD), 'job.yaml': JOB });
  t.equal(
    placement(runCli(['-c', 'cfg.yaml', '--kube-version', '1.29', 'job.yaml'], { cwd: dir }).stdout, 'linkerd-proxy'),
    'native',
  );
  const old = runCli(['-c', 'cfg.yaml', '--kube-version', '1.28', 'job.yaml'], {
    cwd: dir,
    env: { LOG_TO_STDERR: 'true' },
  });
  t.equal(placement(old.stdout, 'linkerd-proxy'), 'classic');
  t.match(infoLines(old.stderr)[0], /classic sidecars: Kubernetes 1\.28 \(--kube-version\); Linkerd .*1\.29/);
  const off = workspace(t, {
    'cfg.yaml': auto(LINKERD.replace('values: {', 'values: {proxy: {nativeSidecar: false}, ')),
    'job.yaml': JOB,
  });
  t.equal(
    placement(runCli(['-c', 'cfg.yaml', '--kube-version', '1.33', 'job.yaml'], { cwd: off }).stdout, 'linkerd-proxy'),
    'classic',
    'values.proxy.nativeSidecar: false',
  );
});

t.test('the ConfigMap form takes "auto"; a driver without native sidecars says so', async (t) => {
  const dir = workspace(t, {
    'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {nativeSidecars: auto}\n',
    'osm.yaml': auto('  mesh: osm\n  policy: enabled\n'),
    'job.yaml': JOB,
  });
  t.equal(
    placement(runCli(['-c', 'cm.yaml', '--kube-version', '1.33', 'job.yaml'], { cwd: dir }).stdout, 'istio-proxy'),
    'native',
  );
  const osm = runCli(['-c', 'osm.yaml', '--kube-version', '1.33', 'job.yaml'], {
    cwd: dir,
    env: { LOG_TO_STDERR: 'true' },
  });
  t.match(infoLines(osm.stderr)[0], /auto: classic sidecars: the osm driver has no native sidecars/);
  const bad = workspace(t, { 'cfg.yaml': auto().replace('auto', 'sometimes'), 'job.yaml': JOB });
  const r = runCli(['-c', 'cfg.yaml', 'job.yaml'], { cwd: bad });
  t.equal(r.status, 1);
  t.match(
    r.stderr,
    /^\[error\] functionConfig: spec\.nativeSidecars must be true, false or auto; got "sometimes"$/m,
    'one error naming the three forms',
  );
});

t.test('Argo CD: the directory plugin with KUBE_VERSION from the build environment', async (t) => {
  const tmp = makeTempDir('native-auto-argocd');
  t.teardown(tmp.cleanup);
  const app = join(tmp.dir, 'app');
  copyExample(join(ROOT, 'examples/argocd/apps/directory'), app);
  writeFileSync(
    join(app, 'injection.yaml'),
    readFileSync(join(app, 'injection.yaml'), 'utf8').replace('nativeSidecars: true', 'nativeSidecars: auto'),
  );
  const tools = makeStandIns(tmp.dir);
  const plugin = parse(readFileSync(join(ROOT, 'examples/argocd/cmp/plugins/directory.yaml'), 'utf8')) as Obj;
  const gen = get(plugin, 'spec', 'generate') as { command: string[]; args: string[] };
  const generate = (kubeVersion: string) => {
    const env: NodeJS.ProcessEnv = {
      PATH: `${tools.bin}:/usr/local/bin:/usr/bin:/bin`,
      HOME: tmp.dir,
      TMPDIR: tmp.dir,
      MESHINJECT_CENTRAL_CONFIG: join(ROOT, 'examples/argocd/cmp/meshinject.yaml'),
      ARGOCD_APP_NAME: 'ledger',
      ARGOCD_APP_NAMESPACE: 'ledger',
      ARGOCD_APP_SOURCE_PATH: 'examples/argocd/apps/directory',
      KUBE_VERSION: kubeVersion,
      KUBE_API_VERSIONS: 'v1,apps/v1,batch/v1',
      ARGOCD_ENV_MESHINJECT_LOG: 'true',
    };
    const r = spawnSync(gen.command[0]!, [...gen.command.slice(1), ...gen.args], { cwd: app, env, encoding: 'utf8' });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const newer = generate('1.33.1');
  t.equal(newer.status, 0, newer.stderr);
  t.equal(placement(newer.stdout, 'istio-proxy'), 'native', "the CronJob's proxy is native on Kubernetes 1.33");
  t.match(newer.stderr, /nativeSidecars: auto: native sidecars: Kubernetes 1\.33 \(KUBE_VERSION\)/);
  const older = generate('1.32.4');
  t.equal(older.status, 0, older.stderr);
  t.equal(placement(older.stdout, 'istio-proxy'), 'classic', 'classic on 1.32');
  t.match(
    older.stderr,
    /\[warning\] batch\/v1\/CronJob\/reconcile: CronJob gets a classic sidecar/,
    'and the CronJob is warned about',
  );
});
