/**
 * Real operator manifests (issue #21), from real-world/ of the test data (test/helpers/data.ts): the kubebuilder scaffold's
 * `config/manager/manager.yaml` and rook's `deploy/examples/operator.yaml`. Through the CLI a user runs:
 * the user's `kubectl.kubernetes.io/default-container` survives inject + uninject and `removeWhenSkipped`
 * for every driver; the rook container's trailing comment block stays with the container it annotates;
 * two consecutive real `kpt fn render --allow-exec` runs change nothing the second time and duplicate no
 * comment beyond what kpt itself does to the file; `-o json` writes no null item for a comment-only document.
 */
import t, { type Test } from 'tap';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { commentCounts, commentDiff, makeTempDir, runCli, runTool, workspace } from '../helpers/e2e.ts';
import { corpus, needs } from '../helpers/data.ts';
import { makeStandIns, runWith } from '../helpers/runners.ts';

const REAL_WORLD = corpus('real-world');
const KUBEBUILDER = REAL_WORLD.path
  ? readFileSync(join(REAL_WORLD.path, 'kubebuilder-manager/manager.yaml'), 'utf8')
  : '';
const ROOK = REAL_WORLD.path ? readFileSync(join(REAL_WORLD.path, 'rook-operator/operator.yaml'), 'utf8') : '';

const head = (mesh: string, extra = '') => `apiVersion: meshinject.dev/v1alpha1
kind: SidecarInjection
metadata:
  name: t
  annotations:
    config.kubernetes.io/local-config: "true"
spec:
  mesh: ${mesh}
  resultAnnotations: false
${extra}`;

const CUSTOM_TEMPLATES = `---
apiVersion: v1
kind: ConfigMap
metadata:
  name: tpl
  annotations:
    config.kubernetes.io/local-config: "true"
data:
  sidecar.hbs: |
    metadata:
      annotations:
        example.com/shipper: "on"
    spec:
      containers:
      - name: shipper
        image: shipper:1
        volumeMounts:
        - {name: logs, mountPath: /logs}
      volumes:
      - name: logs
        emptyDir: {}
`;

/** A stand-in trust anchor (YAML double-quoted text: `\\n` escapes). */
const PEM = '-----BEGIN CERTIFICATE-----\\nMIIBwTCCAWagAwIBAgIQ\\n-----END CERTIFICATE-----\\n';

/**
 * A config per driver under which the kubebuilder manager is injected. `withoutNamespace`: the manifest's own
 * Namespace is left out (OSM's and FSM's webhooks skip a namespace labelled `control-plane`, as kubebuilder's
 * is; the config gives the namespace as one that joined the mesh).
 */
const DRIVERS: Record<string, { config: string; extraInput?: string; withoutNamespace?: boolean; injected: RegExp }> = {
  istio: { config: head('istio', '  policy: enabled\n'), injected: /name: istio-proxy/ },
  linkerd: {
    config: head(
      'linkerd',
      `  policy: enabled\n  linkerd:\n    manual: true\n    values:\n      identityTrustAnchorsPEM: "${PEM}"\n`,
    ),
    injected: /name: linkerd-proxy/,
  },
  osm: {
    config: head(
      'osm',
      '  policy: enabled\n  namespaces:\n  - name: system\n    labels: {openservicemesh.io/monitored-by: osm}\n',
    ),
    withoutNamespace: true,
    injected: /name: envoy/,
  },
  fsm: {
    config: head(
      'fsm',
      '  policy: enabled\n  namespaces:\n  - name: system\n    labels: {flomesh.io/monitored-by: fsm}\n',
    ),
    withoutNamespace: true,
    injected: /name: sidecar/,
  },
  custom: {
    config: head('custom', '  policy: enabled\n  custom:\n    templateConfigMaps: [tpl]\n'),
    extraInput: CUSTOM_TEMPLATES,
    injected: /name: shipper/,
  },
};

const DEFAULT_CONTAINER = 'kubectl.kubernetes.io/default-container: manager';

/** The kubebuilder manifest, without its Namespace document when `withoutNamespace`. */
function managerFor(withoutNamespace?: boolean): string {
  return withoutNamespace ? KUBEBUILDER.slice(KUBEBUILDER.indexOf('---\n') + 4) : KUBEBUILDER;
}

function uninjectConfig(config: string): string {
  return `${config}  mode: uninject\n`;
}

t.test(
  'kubebuilder manager: inject then uninject gives back the bytes, default-container kept, for every driver',
  needs(REAL_WORLD),
  async (t) => {
    for (const [mesh, d] of Object.entries(DRIVERS)) {
      const input = managerFor(d.withoutNamespace) + (d.extraInput ?? '');
      const dir = workspace(
        t,
        { 'in.yaml': input, 'inject.yaml': d.config, 'uninject.yaml': uninjectConfig(d.config) },
        `op-${mesh}`,
      );
      const inj = runCli(['-q', '-c', 'inject.yaml', 'in.yaml'], { cwd: dir });
      t.equal(inj.status, 0, `${mesh}: inject exits 0 (${inj.stderr.trim()})`);
      t.match(inj.stdout, d.injected, `${mesh}: the sidecar is injected`);
      t.ok(inj.stdout.includes(DEFAULT_CONTAINER), `${mesh}: the injected pod keeps the user's default-container`);
      writeFileSync(join(dir, 'injected.yaml'), inj.stdout);
      const un = runCli(['-q', '-c', 'uninject.yaml', 'injected.yaml'], { cwd: dir });
      t.equal(un.status, 0, `${mesh}: uninject exits 0 (${un.stderr.trim()})`);
      t.equal(un.stdout, input, `${mesh}: uninject gives back the input byte for byte (annotation, volumes: [])`);
    }
  },
);

t.test("kubebuilder manager: removeWhenSkipped keeps the user's annotation", needs(REAL_WORLD), async (t) => {
  for (const mesh of ['istio', 'osm']) {
    const d = DRIVERS[mesh]!;
    const skipped = `${d.config.replace('policy: enabled', 'policy: disabled')}  removeWhenSkipped: true\n`;
    const input = managerFor(d.withoutNamespace);
    const dir = workspace(t, { 'in.yaml': input, 'inject.yaml': d.config, 'skip.yaml': skipped }, `rws-${mesh}`);
    const inj = runCli(['-q', '-c', 'inject.yaml', 'in.yaml'], { cwd: dir });
    writeFileSync(join(dir, 'injected.yaml'), inj.stdout);
    const off = runCli(['-q', '-c', 'skip.yaml', 'injected.yaml'], { cwd: dir });
    t.equal(off.status, 0, `${mesh}: the skipped run exits 0`);
    t.ok(
      off.stdout.includes(`annotations:\n        ${DEFAULT_CONTAINER}\n`),
      `${mesh}: the annotation and its map stay`,
    );
    t.match(inj.stdout, d.injected, `${mesh}: injected first`);
    t.equal(off.stdout, input, `${mesh}: removing the sidecar gives back the input`);
  }
});

t.test(
  'rook operator: the trailing comment block stays with the container it annotates',
  needs(REAL_WORLD),
  async (t) => {
    const dir = workspace(
      t,
      {
        'operator.yaml': ROOK,
        'inject.yaml': DRIVERS.istio!.config,
        'uninject.yaml': uninjectConfig(DRIVERS.istio!.config),
      },
      'rook',
    );
    const inj = runCli(['-q', '-c', 'inject.yaml', 'operator.yaml'], { cwd: dir });
    t.equal(inj.status, 0, 'inject exits 0');
    const out = inj.stdout;
    const block = out.indexOf('          # Recommended resource requests and limits, if desired\n');
    const lastEnv = out.indexOf('                  fieldPath: metadata.namespace\n');
    const proxy = out.indexOf('        - name: istio-proxy\n');
    t.ok(
      lastEnv > 0 && block > lastEnv && proxy > block,
      'the commented-out #resources block follows the operator container, before the injected proxy',
    );
    t.ok(
      out.indexOf('          #  value: "5"\n') < proxy,
      'the whole commented-out block (both parts) stays before the proxy',
    );
    t.ok(
      out.indexOf('      # Uncomment these two settings to run the operator on the host network\n') > proxy,
      'the pod-level comment (column 6) still annotates what follows the list',
    );
    t.same(commentDiff(commentCounts(ROOK), commentCounts(out)), [], 'no comment lost or duplicated');
    writeFileSync(join(dir, 'injected.yaml'), out);
    const again = runCli(['-q', '-c', 'inject.yaml', 'injected.yaml'], { cwd: dir });
    t.equal(again.stdout, out, 'a second injection changes nothing');
    const un = runCli(['-q', '-c', 'uninject.yaml', 'injected.yaml'], { cwd: dir });
    t.equal(un.stdout, ROOK, 'uninject gives back the input byte for byte');
  },
);

t.test('-o json: a comment-only document is no item', needs(REAL_WORLD), async (t) => {
  const docs = parseAllDocuments(ROOK).filter((d) => d.toJS() !== null);
  const input = `# Licensed under the Apache License\n# a header document\n---\n${ROOK}---\n# nothing here but a comment\n`;
  const dir = workspace(t, { 'operator.yaml': input, 'inject.yaml': DRIVERS.istio!.config }, 'json');
  const r = runCli(['-q', '-c', 'inject.yaml', '-o', 'json', 'operator.yaml'], { cwd: dir });
  t.equal(r.status, 0, 'exits 0');
  const list = JSON.parse(r.stdout) as { kind: string; items: unknown[] };
  t.equal(list.kind, 'List');
  t.equal(list.items.length, docs.length, `one item per object (${docs.length}), none for comment-only documents`);
  t.notOk(
    list.items.some((i) => i === null),
    'no null item',
  );
});

t.test('containers: [] is an error result naming the resource', needs(REAL_WORLD), async (t) => {
  const input = KUBEBUILDER.replace(/ {6}containers:\n[\s\S]*?(?= {6}volumes: \[\])/, '      containers: []\n');
  t.match(input, /containers: \[\]/, 'fixture edited');
  const dir = workspace(t, { 'in.yaml': input, 'inject.yaml': DRIVERS.istio!.config }, 'empty');
  const r = runCli(['-c', 'inject.yaml', 'in.yaml'], { cwd: dir });
  t.equal(r.status, 1, 'exit 1: an error result');
  t.match(
    r.stderr,
    /Deployment "system\/controller-manager": the pod template's container list is empty \(containers: \[\]\)/,
    'the error names the resource',
  );
  t.match(r.stderr, /spec\.template\.spec\.containers/, 'and the field');
  t.notMatch(r.stdout, /istio-proxy/, 'nothing injected');
});

/** Runs `kpt fn render --allow-exec` in `pkg` with meshinject (or `fn`) as the exec function. */
function render(t: Test, pkg: string, env: NodeJS.ProcessEnv): void {
  const r = runWith('kpt', ['fn', 'render', '.', '--allow-exec'], { cwd: pkg, env });
  t.equal(r.status, 0, `kpt fn render exits 0 ${r.stderr.slice(-400)}`);
}

const KPTFILE = (fn: string) => `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: operator
  annotations:
    config.kubernetes.io/local-config: "true"
pipeline:
  mutators:
    - exec: ${fn}
${fn === 'meshinject' ? '      configPath: injection.yaml\n' : ''}`;

const kpt = runTool('kpt', ['version']);
t.test(
  'two consecutive kpt fn render runs on the operator fixtures',
  needs(REAL_WORLD, kpt.status === 0 ? false : 'kpt is not installed'),
  async (t) => {
    const tmp = makeTempDir('kpt-operators');
    t.teardown(tmp.cleanup);
    // `cat` echoes the ResourceList: what kpt alone does to the file (it re-serialises through kyaml).
    const stand = makeStandIns(tmp.dir, { 'echo-fn': 'exec cat' });
    for (const [name, text] of [
      ['kubebuilder', KUBEBUILDER],
      ['rook', ROOK],
    ] as const) {
      const pkg = (fn: string) => {
        const dir = join(tmp.dir, `${name}-${fn}`);
        cpSync(join(REAL_WORLD.path ?? '', name === 'rook' ? 'rook-operator' : 'kubebuilder-manager'), dir, {
          recursive: true,
        });
        writeFileSync(join(dir, 'Kptfile'), KPTFILE(fn));
        writeFileSync(join(dir, 'injection.yaml'), DRIVERS.istio!.config);
        return dir;
      };
      const file = name === 'rook' ? 'operator.yaml' : 'manager.yaml';
      const mesh = pkg('meshinject');
      const echo = pkg('echo-fn');
      render(t, mesh, stand.env);
      render(t, echo, stand.env);
      const first = readFileSync(join(mesh, file), 'utf8');
      t.match(first, /name: istio-proxy/, `${name}: injected by the first render`);
      t.not(first, text, `${name}: the first render changed the file`);
      render(t, mesh, stand.env);
      t.equal(readFileSync(join(mesh, file), 'utf8'), first, `${name}: the second render changes nothing`);
      const kptOnly = readFileSync(join(echo, file), 'utf8');
      // kpt copies the original's comments back onto the function's output by node path: a comment that ends
      // the document, after the pod spec the injection extends, gets a second copy from kpt (README, "Comments").
      const last = text.trimEnd().split('\n').at(-1)!;
      const extra = commentDiff(commentCounts(kptOnly), commentCounts(first)).filter(
        (d) => !(last.startsWith('#') && d === `${last}: 1 -> 2`),
      );
      t.same(extra, [], `${name}: every other comment as often as kpt alone leaves it (none lost, none duplicated)`);
      if (name === 'kubebuilder') t.ok(first.includes(DEFAULT_CONTAINER), 'the default-container annotation stays');
    }
  },
);
