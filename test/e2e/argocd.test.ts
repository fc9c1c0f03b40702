// End to end: the Argo CD config management plugin variants of examples/argocd, each `generate` run the way
// argocd-cmp-server runs it (argoproj/argo-cd cmpserver/plugin/plugin.go): the command and args of the
// plugin.yaml, in the app's source directory, with the sidecar's environment plus the build environment
// Argo CD sets (ARGOCD_APP_*, KUBE_VERSION, KUBE_API_VERSIONS, ARGOCD_ENV_* from the Application's plugin
// env, ARGOCD_APP_PARAMETERS and PARAM_* from its parameters), and stdout taken as the manifests.
//
// - The app's repository checkout is a read-only copy, and the command runs as uid 999 (the sidecar's
//   user) when this test runs as root, so that the permission bits hold.
// - Each command runs as written (`bash -c ...`) and again with the machine's `sh` in place of bash.
// - PATH holds the stand-ins of runner-helpers.ts: `meshinject` (bin/meshinject.js), `kustomize` (a wrapper
//   over `kubectl kustomize`), and for the Helm variant a `helm` TEST DOUBLE that checks its arguments and
//   prints fixed manifests (what the sample chart renders to), since helm is not on these machines.
import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import {
  ROOT,
  get,
  injectionProblems,
  makeTempDir,
  runCli,
  runTool,
  skippedProblems,
  type Obj,
} from '../helpers/e2e.ts';
import {
  copyExample,
  installCopy,
  makeReadOnly,
  makeStandIns,
  makeWritable,
  shQuote,
  type StandIns,
} from '../helpers/runners.ts';

const ARGO = join(ROOT, 'examples/argocd');
const CENTRAL = join(ARGO, 'cmp/meshinject.yaml');
const IS_ROOT = process.getuid?.() === 0;

/** The rendering of examples/argocd/apps/helm for release `reviews` (what the helm double prints). */
const HELM_OUTPUT = `---
# Source: reviews/templates/deployment.yaml
# No metadata.namespace: \`helm template -n\` does not add one; Argo CD deploys into the destination
# namespace, and meshinject decides for ARGOCD_APP_NAMESPACE.
apiVersion: apps/v1
kind: Deployment
metadata:
  name: reviews
  labels:
    app.kubernetes.io/name: reviews
    app.kubernetes.io/instance: reviews
spec:
  replicas: 2
  selector:
    matchLabels:
      app.kubernetes.io/instance: reviews
  template:
    metadata:
      labels:
        app.kubernetes.io/name: reviews
        app.kubernetes.io/instance: reviews
    spec:
      containers:
        - name: reviews
          image: registry.example.com/reviews/api:1.3.0
          ports:
            - name: http
              containerPort: 9080
`;

interface Sidecar {
  tools: StandIns;
  /** The repository checkout (read-only) and the app directory in it. */
  repo: string;
  /** The sidecar's own /tmp. */
  tmp: string;
  /** The central config as the sidecar mounts it (a copy of examples/argocd/cmp/meshinject.yaml). */
  central: string;
  home: string;
  helmArgs: string;
}

/** A sidecar in a fresh temp dir, removed when the test `t` ends. */
function tempSidecar(t: Test, name: string, edit?: (repo: string) => void): Sidecar {
  const tmp = makeTempDir(name);
  t.teardown(() => {
    makeWritable(join(tmp.dir, 'repo'));
    tmp.cleanup();
  });
  return sidecar(tmp.dir, edit);
}

/** A sidecar: stand-ins (with the helm double), a read-only checkout of examples/, its own /tmp. */
function sidecar(dir: string, edit?: (repo: string) => void): Sidecar {
  chmodSync(dir, 0o755);
  const helmArgs = join(dir, 'helm-args.txt');
  writeFileSync(join(dir, 'helm-output.yaml'), HELM_OUTPUT);
  const tools = makeStandIns(
    dir,
    {
      helm: [
        '# TEST DOUBLE for helm: records its arguments, prints the fixed rendering of the reviews chart',
        `printf '%s\\n' "$@" > ${shQuote(helmArgs)}`,
        `[ "$1" = template ] && [ -f Chart.yaml ] || { echo "helm double: unexpected call: $*" >&2; exit 1; }`,
        `cat ${shQuote(join(dir, 'helm-output.yaml'))}`,
      ].join('\n'),
    },
    installCopy(dir),
  );
  const repo = join(dir, 'repo');
  copyExample(join(ROOT, 'examples'), join(repo, 'examples'));
  edit?.(repo);
  makeReadOnly(repo);
  const tmp = join(dir, 'sidecar-tmp');
  const home = join(dir, 'home');
  for (const d of [tmp, home]) {
    mkdirSync(d);
    chmodSync(d, 0o1777);
  }
  writeFileSync(helmArgs, '');
  chmodSync(helmArgs, 0o666);
  // The ConfigMap mount of the central file: readable by the sidecar's user wherever the clone is.
  const central = join(dir, 'cmp-config/meshinject.yaml');
  mkdirSync(join(dir, 'cmp-config'));
  chmodSync(join(dir, 'cmp-config'), 0o755);
  writeFileSync(central, readFileSync(CENTRAL));
  chmodSync(central, 0o644);
  return { tools, repo, tmp, home, helmArgs, central };
}

interface AppRun {
  variant: 'directory' | 'kustomize' | 'helm';
  app: string;
  namespace: string;
  /** The Application's plugin env (sent as ARGOCD_ENV_<name>). */
  env?: Record<string, string>;
  /** The Application's plugin parameters (name -> string value). */
  parameters?: Record<string, string>;
  /** Environment of the sidecar container itself. */
  sidecarEnv?: Record<string, string>;
  shell?: 'bash' | 'sh';
  /** App directory relative to the checkout (default examples/argocd/apps/<variant>). */
  path?: string;
}

/** Runs the variant's generate command as argocd-cmp-server does; returns exit status and streams. */
function generate(s: Sidecar, run: AppRun) {
  const plugin = parse(readFileSync(join(ARGO, 'cmp/plugins', `${run.variant}.yaml`), 'utf8')) as Obj;
  const gen = get(plugin, 'spec', 'generate') as { command: string[]; args?: string[] };
  const command = [...gen.command];
  if (run.shell === 'sh') command[0] = command[0] === 'bash' ? 'sh' : command[0]!;
  const path = run.path ?? `examples/argocd/apps/${run.variant}`;
  const params = Object.entries(run.parameters ?? {});
  const env: NodeJS.ProcessEnv = {
    // the sidecar container's environment
    PATH: `${s.tools.bin}:/usr/local/bin:/usr/bin:/bin`,
    HOME: s.home,
    TMPDIR: s.tmp,
    ...Object.fromEntries(Object.entries(run.sidecarEnv ?? {}).map(([k, v]) => [k, v === CENTRAL ? s.central : v])),
    // the build environment (docs/user-guide/build-environment.md)
    ARGOCD_APP_NAME: run.app,
    ARGOCD_APP_NAMESPACE: run.namespace,
    ARGOCD_APP_PROJECT_NAME: 'default',
    ARGOCD_APP_REVISION: '6f2c3b1d9e8a7f6c5b4a39281706f5e4d3c2b1a0',
    ARGOCD_APP_REVISION_SHORT: '6f2c3b1',
    ARGOCD_APP_REVISION_SHORT_8: '6f2c3b1d',
    ARGOCD_APP_SOURCE_PATH: path,
    ARGOCD_APP_SOURCE_REPO_URL: 'https://github.com/meshinject/meshinject.git',
    ARGOCD_APP_SOURCE_TARGET_REVISION: 'main',
    KUBE_VERSION: '1.32.4',
    KUBE_API_VERSIONS: 'v1,apps/v1,batch/v1,networking.k8s.io/v1',
    ...Object.fromEntries(Object.entries(run.env ?? {}).map(([k, v]) => [`ARGOCD_ENV_${k}`, v])),
    ...(params.length
      ? { ARGOCD_APP_PARAMETERS: JSON.stringify(params.map(([name, value]) => ({ name, string: value }))) }
      : {}),
    ...Object.fromEntries(params.map(([k, v]) => [`PARAM_${k.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`, v])),
  };
  const [cmd, ...args] = IS_ROOT ? ['setpriv', '--reuid=999', '--regid=999', '--clear-groups', ...command] : command;
  const r = spawnSync(cmd!, [...args, ...(gen.args ?? [])], {
    cwd: join(s.repo, path),
    env,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The objects of a plain YAML stream (Argo CD's kube.SplitYAML reading of stdout). */
function objects(stream: string): Obj[] {
  return parseAllDocuments(stream)
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null);
}
const byName = (objs: Obj[], kind: string, name: string) =>
  objs.find((o) => o.kind === kind && get(o, 'metadata', 'name') === name)!;

const LEDGER: AppRun = {
  variant: 'directory',
  app: 'ledger',
  namespace: 'ledger',
  env: { MESHINJECT_LOG: 'true' },
  sidecarEnv: { MESHINJECT_CENTRAL_CONFIG: CENTRAL },
};
const SHOP: AppRun = {
  variant: 'kustomize',
  app: 'shop',
  namespace: 'storefront',
  sidecarEnv: { MESHINJECT_CENTRAL_CONFIG: CENTRAL },
};
const REVIEWS: AppRun = {
  variant: 'helm',
  app: 'reviews',
  namespace: 'reviews',
  parameters: { revision: 'canary' },
  sidecarEnv: { MESHINJECT_CENTRAL_CONFIG: CENTRAL },
};

t.test('every plugin.yaml: a ConfigManagementPlugin run by bash, with the four UI parameters', async (t) => {
  for (const variant of ['directory', 'kustomize', 'helm']) {
    const p = parse(readFileSync(join(ARGO, 'cmp/plugins', `${variant}.yaml`), 'utf8')) as Obj;
    t.equal(p.kind, 'ConfigManagementPlugin');
    t.equal(get(p, 'metadata', 'name'), `meshinject-${variant}`);
    t.equal(get(p, 'spec', 'version'), 'v1');
    t.same(get(p, 'spec', 'generate', 'command'), ['bash', '-c'], `${variant}: generate runs under bash`);
    t.notMatch(
      String(get(p, 'spec', 'generate', 'args', 0)),
      /pipefail|\S +\| +\S/,
      `${variant}: no pipeline whose failure could go unseen`,
    );
    const names = ((get(p, 'spec', 'parameters', 'static') ?? []) as Obj[]).map((x) => x.name);
    t.same(names, ['mesh', 'revision', 'policy', 'namespace'], `${variant}: parameters announced`);
  }
});

for (const shell of ['bash', 'sh'] as const) {
  t.test(
    `directory variant under ${shell}: ARGOCD_APP_NAMESPACE decides, the app layer applies, local-config dropped`,
    async (t) => {
      const s = tempSidecar(t, `argocd-dir-${shell}`);
      const r = generate(s, { ...LEDGER, shell });
      t.equal(r.status, 0, r.stderr);
      const objs = objects(r.stdout);
      t.same(
        objs.map((o) => `${String(o.kind)}/${String(get(o, 'metadata', 'name'))}`),
        ['Deployment/ledger', 'Service/ledger', 'CronJob/reconcile'],
        'the manifests, without the local-config injection.yaml',
      );
      t.notMatch(
        r.stdout,
        /kind: ResourceList|config\.kubernetes\.io\/local-config/,
        'a plain stream, nothing local-config',
      );
      const dep = byName(objs, 'Deployment', 'ledger');
      t.same(
        injectionProblems(dep, dep, { native: true }).filter((p) => !/app containers/.test(p)),
        [],
        'ledger injected with native sidecars (app layer over the central config)',
      );
      t.equal(get(dep, 'metadata', 'namespace'), undefined, 'no namespace written into the manifest');
      t.match(
        JSON.stringify(dep),
        /namespaces\/ledger\/deployments\/ledger/,
        'decided and rendered for namespace ledger (ARGOCD_APP_NAMESPACE)',
      );
      t.match(JSON.stringify(dep), /docker\.io\/istio\/proxyv2:1\.31\.0/, 'proxy image from the central config');
      t.match(
        r.stderr,
        /^\[info\] apps\/v1\/Deployment\/ledger: injected \(istio, revision default\)/m,
        'ARGOCD_ENV_MESHINJECT_LOG=true: one line per workload on stderr (the sidecar log)',
      );
    },
  );
}

t.test('MESHINJECT_CENTRAL_CONFIG set empty: the render runs on the app layers alone', async (t) => {
  const s = tempSidecar(t, 'argocd-no-central');
  // With the central file, namespace sandbox is not selected (the test below); the app's layer has no selector.
  const r = generate(s, { ...LEDGER, namespace: 'sandbox', sidecarEnv: { MESHINJECT_CENTRAL_CONFIG: '' } });
  t.equal(r.status, 0, r.stderr);
  t.match(r.stderr, /Deployment\/ledger: injected/, "no central namespaceSelector: the app's layer decides alone");
  t.notMatch(r.stderr, /namespace-not-selected/);
});

t.test('directory variant: another destination namespace is not selected', async (t) => {
  const s = tempSidecar(t, 'argocd-dir-ns');
  const r = generate(s, { ...LEDGER, namespace: 'sandbox' });
  t.equal(r.status, 0, r.stderr);
  const dep = byName(objects(r.stdout), 'Deployment', 'ledger');
  t.same(
    skippedProblems(dep, { reason: /namespace-not-selected/ }),
    [],
    'skipped: namespace sandbox has no istio-injection label',
  );
  const withParam = generate(s, { ...LEDGER, namespace: 'sandbox', parameters: { namespace: 'ledger' } });
  t.equal(withParam.status, 0, withParam.stderr);
  t.same(
    injectionProblems(
      byName(objects(withParam.stdout), 'Deployment', 'ledger'),
      byName(objects(r.stdout), 'Deployment', 'ledger'),
      { native: true },
    ).filter((p) => !/app containers|skipped/.test(p)),
    [],
    'the namespace parameter (--default-namespace) wins over ARGOCD_APP_NAMESPACE',
  );
});

t.test(
  'kustomize variant (bash and sh): the shop through `kustomize build`, same result as the CLI pipe',
  async (t) => {
    const s = tempSidecar(t, 'argocd-kustomize');
    const viaBash = generate(s, SHOP);
    const viaSh = generate(s, { ...SHOP, shell: 'sh' });
    t.equal(viaBash.status, 0, viaBash.stderr);
    t.equal(viaBash.stderr, '', 'nothing on stderr without ARGOCD_ENV_MESHINJECT_LOG');
    t.equal(viaSh.status, 0, viaSh.stderr);
    t.equal(viaSh.stdout, viaBash.stdout, 'sh and bash give the same manifests');
    const built = runTool('kubectl', ['kustomize', join(ROOT, 'examples/argocd/apps/kustomize')]);
    const cli = runCli(['--config', CENTRAL, '--config', join(ROOT, 'examples/argocd/apps/kustomize/injection.yaml')], {
      input: built.stdout,
    });
    t.equal(viaBash.stdout, cli.stdout, 'equals kubectl kustomize | meshinject --config central --config app');
    const objs = objects(viaBash.stdout);
    for (const [kind, name] of [
      ['Deployment', 'web'],
      ['StatefulSet', 'orders-db'],
      ['CronJob', 'nightly-report'],
      ['Job', 'migrate-schema'],
    ] as const) {
      const o = byName(objs, kind, name);
      t.same(
        injectionProblems(o, o, { native: true }).filter((p) => !/app containers/.test(p)),
        [],
        `${kind}/${name} injected (native)`,
      );
    }
    t.same(
      skippedProblems(byName(objs, 'Deployment', 'payments-legacy'), { reason: /label-false/ }),
      [],
      'the opted-out workload is skipped',
    );
    t.same(
      skippedProblems(byName(objs, 'DaemonSet', 'node-exporter'), { reason: /host-network/ }),
      [],
      'the host-network DaemonSet is skipped',
    );
    t.same(
      skippedProblems(byName(objs, 'Deployment', 'admin'), { reason: /namespace-not-selected/ }),
      [],
      'backoffice is not selected',
    );
    const sync = (kind: string, name: string) =>
      get(byName(objs, kind, name), 'metadata', 'annotations', 'argocd.argoproj.io/sync-options');
    t.equal(sync('Job', 'migrate-schema'), 'Replace=true', 'the injected Job is replaced on sync (central config)');
    t.equal(sync('Deployment', 'web'), undefined, 'other kinds are not');
  },
);

t.test('helm variant: helm template with the app name and namespace; the revision parameter', async (t) => {
  const s = tempSidecar(t, 'argocd-helm');
  for (const shell of ['bash', 'sh'] as const) {
    const r = generate(s, { ...REVIEWS, shell });
    t.equal(r.status, 0, r.stderr);
    t.same(
      readFileSync(s.helmArgs, 'utf8').trim().split('\n'),
      ['template', 'reviews', '.', '-n', 'reviews', '--kube-version', '1.32.4'],
      `${shell}: helm template "$ARGOCD_APP_NAME" . -n "$ARGOCD_APP_NAMESPACE" --kube-version "$KUBE_VERSION"`,
    );
    const dep = byName(objects(r.stdout), 'Deployment', 'reviews');
    t.same(
      injectionProblems(dep, dep, { annotation: 'injected (istio, revision canary)' }).filter(
        (p) => !/app containers/.test(p),
      ),
      [],
      `${shell}: injected for revision canary`,
    );
    t.equal(get(dep, 'spec', 'template', 'metadata', 'annotations', 'istio.io/rev'), 'canary');
  }
  const off = generate(s, { ...REVIEWS, parameters: { policy: 'disabled' } });
  t.equal(off.status, 0, off.stderr);
  t.same(
    skippedProblems(byName(objects(off.stdout), 'Deployment', 'reviews'), { reason: /policy-disabled/ }),
    [],
    'the policy parameter disables injection',
  );
});

t.test('failures: non-zero exit, the reason on stderr, nothing on stdout', async (t) => {
  const s = tempSidecar(t, 'argocd-fail', (repo) => {
    writeFileSync(join(repo, 'examples/argocd/apps/kustomize/kustomization.yaml'), 'resources:\n  - missing.yaml\n');
    mkdirSync(join(repo, 'examples/argocd/apps/empty'));
    writeFileSync(
      join(repo, 'examples/argocd/apps/empty/injection.yaml'),
      readFileSync(join(ROOT, 'examples/argocd/apps/directory/injection.yaml')),
    );
    // Issue #39: a workload in a namespace neither the rendering nor spec.namespaces describes.
    mkdirSync(join(repo, 'examples/argocd/apps/unknown-ns'));
    writeFileSync(
      join(repo, 'examples/argocd/apps/unknown-ns/injection.yaml'),
      'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata:\n  name: payments\n  annotations: {config.kubernetes.io/local-config: "true"}\nspec:\n  namespaceSelector: {matchLabels: {mesh: "on"}}\n  unknownNamespaces: error\n',
    );
    writeFileSync(
      join(repo, 'examples/argocd/apps/unknown-ns/app.yaml'),
      'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: payments, namespace: payments}\nspec:\n  selector: {matchLabels: {app: payments}}\n  template:\n    metadata: {labels: {app: payments}}\n    spec:\n      containers: [{name: payments, image: payments:1}]\n',
    );
  });
  const cases: [string, AppRun, RegExp][] = [
    [
      'a parameter that is not a plain word',
      { ...REVIEWS, parameters: { revision: 'canary; rm -rf /' } },
      /parameter revision must be/,
    ],
    ['an invalid policy', { ...REVIEWS, parameters: { policy: 'sometimes' } }, /spec\.policy/],
    ['kustomize fails', SHOP, /missing\.yaml/],
    [
      'nothing to deploy (only local-config)',
      { ...LEDGER, path: 'examples/argocd/apps/empty' },
      /the output would hold no resources/,
    ],
    [
      'a namespace with unknown labels under spec.unknownNamespaces: error',
      { ...LEDGER, path: 'examples/argocd/apps/unknown-ns' },
      /\[error\] namespace payments is neither a Namespace object in the input nor listed in spec\.namespaces/,
    ],
  ];
  // Fail closed: without its central file the platform's last word would be gone.
  cases.push([
    'the central config is missing',
    { ...LEDGER, sidecarEnv: { MESHINJECT_CENTRAL_CONFIG: join(s.tmp, 'no-such-dir/meshinject.yaml') } },
    /meshinject plugin: the central config .*no-such-dir\/meshinject\.yaml is missing/,
  ]);
  for (const [what, run, reason] of cases) {
    for (const shell of ['bash', 'sh'] as const) {
      const r = generate(s, { ...run, shell });
      t.not(r.status, 0, `${what} (${shell}): non-zero exit`);
      t.equal(r.stdout, '', `${what} (${shell}): no manifests`);
      t.match(r.stderr, reason, `${what} (${shell}): the reason on stderr`);
    }
  }
});

t.test(
  'the repo-server sidecar Component: argocd-cmp-server, uid 999, the plugin ConfigMap, its own /tmp',
  async (t) => {
    const tmp = makeTempDir('argocd-component');
    t.teardown(tmp.cleanup);
    // TEST DOUBLE of Argo CD's install manifest: only the repo-server Deployment, with the volumes the
    // upstream one has (var-files, plugins) and its own container.
    writeFileSync(
      join(tmp.dir, 'repo-server.yaml'),
      `apiVersion: apps/v1
kind: Deployment
metadata:
  name: argocd-repo-server
spec:
  selector:
    matchLabels: {app.kubernetes.io/name: argocd-repo-server}
  template:
    metadata:
      labels: {app.kubernetes.io/name: argocd-repo-server}
    spec:
      containers:
        - name: argocd-repo-server
          image: quay.io/argoproj/argocd:v3.1.0
      volumes:
        - name: var-files
          emptyDir: {}
        - name: plugins
          emptyDir: {}
`,
    );
    writeFileSync(
      join(tmp.dir, 'kustomization.yaml'),
      `resources:\n  - repo-server.yaml\ncomponents:\n  - ${relative(tmp.dir, join(ARGO, 'cmp'))}\n`,
    );
    const r = runTool('kubectl', ['kustomize', tmp.dir]);
    t.equal(r.status, 0, r.stderr);
    const objs = objects(r.stdout);
    const cm = objs.find((o) => o.kind === 'ConfigMap')!;
    const dep = byName(objs, 'Deployment', 'argocd-repo-server');
    const spec = get(dep, 'spec', 'template', 'spec') as { containers: Obj[]; volumes: Obj[] };
    t.same(
      spec.containers.map((c) => c.name).sort(),
      ['argocd-repo-server', 'meshinject-directory', 'meshinject-helm', 'meshinject-kustomize'],
      'three sidecars beside the repo-server',
    );
    const cmName = String(get(cm, 'metadata', 'name'));
    t.match(cmName, /^argocd-meshinject-cmp-/, 'the generated plugin ConfigMap');
    for (const variant of ['directory', 'kustomize', 'helm']) {
      const c = spec.containers.find((x) => x.name === `meshinject-${variant}`)!;
      t.same(c.command, ['/var/run/argocd/argocd-cmp-server'], `${variant}: argocd-cmp-server`);
      t.equal(get(c, 'securityContext', 'runAsUser'), 999, `${variant}: uid 999`);
      t.equal(get(c, 'securityContext', 'runAsNonRoot'), true);
      t.match(String(c.image), /^ghcr\.io\/meshinject\/meshinject-argocd-cmp:v\d+\.\d+\.\d+$/);
      const mounts = c.volumeMounts as Obj[];
      const at = (p: string) => mounts.find((m) => m.mountPath === p);
      t.equal(at('/var/run/argocd')?.name, 'var-files');
      t.equal(at('/home/argocd/cmp-server/plugins')?.name, 'plugins');
      t.same(at('/home/argocd/cmp-server/config/plugin.yaml'), {
        name: 'meshinject-cmp',
        mountPath: '/home/argocd/cmp-server/config/plugin.yaml',
        subPath: `${variant}.yaml`,
      });
      t.equal(
        get(cm, 'data', `${variant}.yaml`),
        readFileSync(join(ARGO, 'cmp/plugins', `${variant}.yaml`), 'utf8'),
        `${variant}: the ConfigMap holds plugins/${variant}.yaml`,
      );
      const tmpVol = spec.volumes.find((v) => v.name === at('/tmp')?.name);
      t.same(tmpVol, { name: `meshinject-${variant}-tmp`, emptyDir: {} }, `${variant}: its own /tmp`);
    }
    t.equal(get(cm, 'data', 'meshinject.yaml'), readFileSync(CENTRAL, 'utf8'), 'the central config');
    t.same(
      spec.volumes.find((v) => v.name === 'meshinject-cmp'),
      { name: 'meshinject-cmp', configMap: { name: cmName } },
      'the volume names the generated ConfigMap',
    );
    t.same(
      spec.containers.find((c) => c.name === 'argocd-repo-server'),
      { name: 'argocd-repo-server', image: 'quay.io/argoproj/argocd:v3.1.0' },
      'the repo-server container untouched',
    );
  },
);

t.test('applications.yaml: each Application names a plugin as <name>-<version>', async (t) => {
  const apps = objects(readFileSync(join(ARGO, 'applications.yaml'), 'utf8'));
  t.equal(apps.length, 3);
  for (const app of apps) {
    const path = String(get(app, 'spec', 'source', 'path'));
    const variant = path.split('/').pop()!;
    const plugin = parse(readFileSync(join(ARGO, 'cmp/plugins', `${variant}.yaml`), 'utf8')) as Obj;
    t.equal(
      get(app, 'spec', 'source', 'plugin', 'name'),
      `${String(get(plugin, 'metadata', 'name'))}-${String(get(plugin, 'spec', 'version'))}`,
      `${String(get(app, 'metadata', 'name'))}: plugin name`,
    );
  }
});
