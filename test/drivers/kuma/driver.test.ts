/**
 * The kuma driver through the CLI and `run`: what a user sees. Expectations follow kumahq/kuma's injector at
 * 348b6528 (injector.go, precheck.go, containers/factory.go, probes/, transparentproxy/kubernetes) and
 * kuma-cp's defaults (kuma-cp.defaults.yaml), read by hand; the whole-pod goldens are the Kuma corpus
 * of the test data (conformance/kuma, run by test/conformance/corpora.test.ts).
 */
import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { run } from '../../../src/run.ts';
import { runCli, workspace, type Obj } from '../../helpers/e2e.ts';

const NS =
  'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  labels:\n    kuma.io/sidecar-injection: enabled\n';
const deployment = (extra = '', podExtra = '') => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels:
        app: web${extra}
    spec:
      containers:
      - name: web
        image: web:1
        ports:
        - name: http
          containerPort: 8080
        readinessProbe:
          httpGet:
            path: /healthz
            port: 8080
          timeoutSeconds: 3${podExtra}
`;
const config = (kuma = '', extra = '') => `apiVersion: meshinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: mesh}
spec:
  mesh: kuma${extra}
  kuma:
    controlPlane:
      caCert: "-----BEGIN CERTIFICATE-----\\nX\\n-----END CERTIFICATE-----\\n"${kuma}
`;

const docs = (text: string) =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as Obj)
    .filter((d) => d !== null);
type Pod = {
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: { containers: Obj[]; initContainers?: Obj[]; volumes?: Obj[] };
};
const podOf = (out: string, kind = 'Deployment'): Pod =>
  (docs(out).find((d) => d.kind === kind)!.spec as Obj).template as Pod;
const byName = (list: Obj[] | undefined, name: string) => list?.find((c) => c.name === name);
const env = (c: Obj | undefined) =>
  Object.fromEntries(((c?.env ?? []) as Obj[]).map((e) => [e.name, e.value ?? e.valueFrom]));

t.test("kuma-cp's defaults when controlPlaneConfig is absent", async (t) => {
  const out = run(`${NS}---\n${deployment()}`, { functionConfig: config() });
  t.equal(out.exitCode, 0, out.stderr);
  const pod = podOf(out.stdout);
  t.same(
    pod.spec.containers.map((c) => c.name),
    ['kuma-sidecar', 'web'],
    'nativeSidecars off (the default): kuma-sidecar first in containers',
  );
  t.same(
    pod.spec.initContainers?.map((c) => c.name),
    ['kuma-init'],
    'kuma-init appended to the (empty) init containers',
  );
  const sidecar = byName(pod.spec.containers, 'kuma-sidecar')!;
  t.equal(sidecar.image, 'kuma/kuma-dp:latest');
  const e = env(sidecar);
  t.equal(
    e.KUMA_CONTROL_PLANE_URL,
    'https://kuma-control-plane.kuma-system:5678',
    'URL built from controlPlaneServiceName, systemNamespace and dpServer.port',
  );
  t.equal(e.KUMA_DNS_ENABLED, 'true', 'builtinDNS on by default');
  t.equal(e.KUMA_DNS_PROXY_PORT, '15053');
  t.same(
    e.HOST_IP,
    { fieldRef: { apiVersion: 'v1', fieldPath: 'status.hostIP' } },
    'otelPipeEnabled by default: HOST_IP, no OTEL_PIPE_ENABLED=false',
  );
  t.equal(e.KUMA_DATAPLANE_DRAIN_TIME, '30s');
  t.equal(e.KUMA_APPLICATION_PROBE_PROXY_PORT, '9001');
  t.same(
    (sidecar.readinessProbe as Obj).httpGet,
    { path: '/ready', port: 9902 },
    'envoyAdminUnixSocket is on by default: probes go to the readiness port',
  );
  t.notOk(sidecar.startupProbe, 'no startup probe outside native sidecars');
  t.same((sidecar.resources as Obj).limits, { memory: '512Mi', 'ephemeral-storage': '1G' }, 'cpu limit 0 is left out');
  t.notMatch((sidecar.args as string[]).join(' '), /--concurrency/, 'no CPU limit: no concurrency');
  const tp = pod.metadata.annotations!['traffic.kuma.io/transparent-proxy-config']!;
  t.match(
    tp,
    /^ {4}excludePorts:\n {4}- 9001\n {4}- 9902\n/m,
    'probe proxy port, then (admin on a Unix socket) the readiness port excluded from inbound',
  );
  t.match(tp, /^ {4}port: 15053$/m, 'DNS redirect port from builtinDNS.port');
  t.match(tp, /^kumaDPUser: "5678"$/m);
  t.same(
    (byName(pod.spec.containers, 'web')!.readinessProbe as Obj).httpGet,
    { path: '/8080/healthz', port: 9001, httpHeaders: [{ name: 'X-Kuma-Probes-Timeout', value: '3' }] },
    'virtual probe on the probe proxy',
  );
  t.equal(pod.metadata.labels!['kuma.io/mesh'], 'default');
  t.notOk(
    out.results.some((r) => /caCert/.test(r.message)),
    'no CA warning when the PEM is given',
  );
  const noCa = run(`${NS}---\n${deployment()}`, {
    functionConfig: config().replace(/\n {4}controlPlane:\n.*\n/, '\n    meshes: {default: {}}\n'),
  });
  t.equal(noCa.exitCode, 0, noCa.stderr);
  t.match(
    noCa.stderr + JSON.stringify(noCa.results),
    /spec\.kuma\.controlPlane\.caCert is not set/,
    'a missing CA PEM is a visible warning',
  );
});

t.test('controlPlaneConfig pasted as text merges over the defaults; nativeSidecars', async (t) => {
  const cp = `
    controlPlaneConfig: |
      bootstrapServer:
        params:
          envoyAdminUnixSocket: false
      runtime:
        kubernetes:
          injector:
            sidecarContainer:
              image: kuma/kuma-dp:2.12.0
              resources:
                limits:
                  cpu: 2500m
              envVars:
                EXTRA: "1"
            exceptions:
              labels:
                skip-me: "yes"`;
  const out = run(`${NS}---\n${deployment()}`, { functionConfig: config(cp, '\n  nativeSidecars: true') });
  t.equal(out.exitCode, 0, out.stderr);
  const pod = podOf(out.stdout);
  t.same(
    pod.spec.initContainers?.map((c) => c.name),
    ['kuma-init', 'kuma-sidecar'],
    'native: kuma-init, then kuma-sidecar, first',
  );
  const sidecar = byName(pod.spec.initContainers, 'kuma-sidecar')!;
  t.equal(sidecar.image, 'kuma/kuma-dp:2.12.0');
  t.equal(sidecar.restartPolicy, 'Always');
  t.same(sidecar.lifecycle, { preStop: { exec: { command: ['killall', '-USR2', 'kuma-dp'] } } });
  t.same(
    (sidecar.readinessProbe as Obj).httpGet,
    { path: '/ready', port: 9901 },
    'TCP admin: probes on the admin port',
  );
  t.same(sidecar.startupProbe as Obj, {
    httpGet: { path: '/ready', port: 9901 },
    initialDelaySeconds: 1,
    timeoutSeconds: 3,
    periodSeconds: 5,
    successThreshold: 1,
    failureThreshold: 12,
  });
  t.same(
    (sidecar.resources as Obj).requests,
    { cpu: '50m', memory: '64Mi', 'ephemeral-storage': '50M' },
    'requests keep the defaults under a partial resources section',
  );
  t.ok((sidecar.args as string[]).includes('--concurrency=2'), '2500m: 2 whole CPUs');
  t.equal(env(sidecar).EXTRA, '1');
  const skipped = run(`${NS}---\n${deployment('\n        skip-me: "yes"')}`, { functionConfig: config(cp) });
  t.match(
    skipped.results.find((r) => r.tags?.['meshinject.dev/reason'])?.tags,
    { 'meshinject.dev/reason': 'exception-label' },
    'a configured exception label merges into the default map',
  );
});

t.test('refusals are error results that name the cause', async (t) => {
  const missingMesh = run(`${NS}---\n${deployment('\n        kuma.io/mesh: payments')}`, {
    functionConfig: config('\n    meshes: {default: {}}'),
  });
  t.equal(missingMesh.exitCode, 1);
  t.match(missingMesh.results.find((r) => r.severity === 'error')?.message, /meshes\.kuma\.io "payments" not found/);
  const badLabel = run(`${NS}---\n${deployment('\n        kuma.io/sidecar-injection: maybe')}`, {
    functionConfig: config(),
  });
  t.equal(badLabel.exitCode, 1);
  t.match(
    badLabel.results.find((r) => r.severity === 'error'),
    {
      message: /kuma\.io\/sidecar-injection" has wrong value "maybe"/,
      field: { path: 'spec.template.metadata.labels[kuma.io/sidecar-injection]' },
    },
  );
  const gw = run(
    `${NS}---\n${deployment('', '')}`.replace(
      'labels:\n        app: web',
      'labels:\n        app: web\n      annotations:\n        kuma.io/gateway: enabled\n        kuma.io/application-probe-proxy-port: "9000"',
    ),
    { functionConfig: config() },
  );
  t.equal(gw.exitCode, 1);
  t.match(gw.results.find((r) => r.severity === 'error')?.message, /can't be enabled in gateway mode/);
  const uid = run(`${NS}---\n${deployment('', '\n        securityContext: {runAsUser: 5678}')}`, {
    functionConfig: config(),
  });
  t.match(
    uid.results.find((r) => r.severity === 'error')?.message,
    /containers using same UID as sidecar is unsupported: \["web"\]/,
  );
  const patch = run(
    `${NS}---\n${deployment()}`.replace(
      'labels:\n        app: web',
      'labels:\n        app: web\n      annotations:\n        kuma.io/container-patches: hardening',
    ),
    { functionConfig: config() },
  );
  t.match(patch.results.find((r) => r.severity === 'error')?.message, /container patches are missing: \["hardening"\]/);
  const onProxyPort = run(
    `${NS}---\n${deployment().replace('port: 8080\n          timeoutSeconds', 'port: 9001\n          timeoutSeconds')}`,
    { functionConfig: config() },
  );
  t.match(
    onProxyPort.results.find((r) => r.severity === 'error')?.message,
    /cannot override Pod's probes\. Port for probe cannot be set to 9001/,
  );
});

t.test('config errors name the field', async (t) => {
  const bad = run(`${NS}---\n${deployment()}`, {
    functionConfig: config(
      '\n    controlPlaneConfig: "runtime: [unclosed"\n    transparentProxyConfig: {ipFamilyMode: ipv6}',
    ),
  });
  t.not(bad.exitCode, 0);
  t.match(bad.stderr, /spec\.kuma\.controlPlaneConfig is text but not valid YAML/);
  t.match(bad.stderr, /spec\.kuma\.transparentProxyConfig\.ipFamilyMode must be 'dualstack' or 'ipv4'/);
  const unknown = run(`${NS}---\n${deployment()}`, { functionConfig: config('\n    meshs: {default: {}}') });
  t.not(unknown.exitCode, 0, 'a misspelt field of spec.kuma is refused');
  t.match(unknown.stderr, /meshs/);
  const badPatch = run(`${NS}---\n${deployment()}`, {
    functionConfig: config(
      '\n    containerPatches:\n      p: {sidecarPatch: [{op: add, path: /x, value: "not json"}]}',
    ),
  });
  t.not(badPatch.exitCode, 0);
  t.match(badPatch.stderr, /spec\.kuma\.containerPatches\.p\.sidecarPatch\[0\]\.value must be JSON text/);
});

t.test('a second run changes nothing; uninject gives the manifest back; check sees drift and opt-outs', async (t) => {
  const cfg = config('', '\n  nativeSidecars: true\n  resultAnnotations: false');
  const dir = workspace(t, { 'injection.yaml': cfg, 'ns.yaml': NS, 'web.yaml': deployment() });
  const first = runCli(['-c', 'injection.yaml', 'ns.yaml', 'web.yaml'], { cwd: dir });
  t.equal(first.status, 0, first.stderr);
  writeFileSync(join(dir, 'out.yaml'), first.stdout);
  const second = runCli(['-c', 'injection.yaml', 'out.yaml'], { cwd: dir });
  t.equal(second.stdout, first.stdout, 'idempotent');
  const pass = runCli(['check', '-c', 'injection.yaml', 'out.yaml'], { cwd: dir });
  t.equal(pass.status, 0, `injected manifests pass check: ${pass.stderr}`);
  writeFileSync(join(dir, 'stale.yaml'), first.stdout.replace('kuma/kuma-dp:latest', 'kuma/kuma-dp:2.0.0'));
  const drift = runCli(['check', '-c', 'injection.yaml', 'stale.yaml'], { cwd: dir });
  t.equal(drift.status, 1);
  t.match(drift.stderr, /injection-drift/);
  writeFileSync(join(dir, 'uninject.yaml'), cfg.replace('mesh: kuma', 'mesh: kuma\n  mode: uninject'));
  const un = runCli(['-c', 'uninject.yaml', 'out.yaml'], { cwd: dir });
  t.equal(un.status, 0, un.stderr);
  const input = `${readFileSync(join(dir, 'ns.yaml'), 'utf8')}---\n${readFileSync(join(dir, 'web.yaml'), 'utf8')}`;
  t.equal(un.stdout, input, 'uninject gives back the input, byte for byte');
  const optOut = deployment('\n        kuma.io/sidecar-injection: disabled');
  writeFileSync(join(dir, 'optout.yaml'), optOut);
  writeFileSync(join(dir, 'strict.yaml'), `${cfg}  check: {forbidOptOut: true}\n`);
  const forbidden = runCli(['check', '-c', 'strict.yaml', 'ns.yaml', 'optout.yaml'], { cwd: dir });
  t.equal(forbidden.status, 1);
  t.match(forbidden.stderr, /opt-out-forbidden/);
});

t.test('explain shows the Kuma rules in order', async (t) => {
  const dir = workspace(t, {
    'injection.yaml': config(),
    'ns.yaml': NS,
    'web.yaml': deployment('\n        kuma.io/sidecar-injection: disabled'),
  });
  const ex = runCli(['explain', '-c', 'injection.yaml', 'ns.yaml', 'web.yaml'], { cwd: dir });
  t.equal(ex.status, 0, ex.stderr);
  const text = ex.stdout + ex.stderr;
  t.match(text, /kuma\.exceptions/);
  t.match(text, /kuma\.sidecar-injection-label/);
  t.match(text, /pod-label-disabled/);
});

t.test('a CronJob: Kuma reads and writes the pod template of the job template', async (t) => {
  const cron = `apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: shop}
spec:
  schedule: "0 1 * * *"
  jobTemplate:
    metadata:
      labels: {kuma.io/sidecar-injection: disabled}
    spec:
      template:
        metadata:
          labels: {app: nightly}
        spec:
          restartPolicy: Never
          containers:
          - name: job
            image: job:1
`;
  const out = run(`${NS}---\n${cron}`, { functionConfig: config('', '\n  nativeSidecars: true') });
  t.equal(out.exitCode, 0, out.stderr);
  const tpl = (((docs(out.stdout).find((d) => d.kind === 'CronJob')!.spec as Obj).jobTemplate as Obj).spec as Obj)
    .template as Pod;
  t.same(
    tpl.spec.initContainers?.map((c) => c.name),
    ['kuma-init', 'kuma-sidecar'],
    "the Job template's label is not the pod's: the namespace label decides",
  );
});

t.test('the ConfigMap form: kuma.<key> values are YAML text', async (t) => {
  const cm = `apiVersion: v1
kind: ConfigMap
metadata: {name: mesh}
data:
  mesh: kuma
  kuma.controlPlaneConfig: |
    runtime:
      kubernetes:
        injector:
          sidecarContainer: {image: "kuma/kuma-dp:9.9.9"}
  kuma.controlPlane: "url: https://cp.example:5678"
  kuma.meshes: "default: {}"
`;
  const out = run(`${NS}---\n${deployment()}`, { functionConfig: cm });
  t.equal(out.exitCode, 0, out.stderr);
  const sidecar = byName(podOf(out.stdout).spec.containers, 'kuma-sidecar')!;
  t.equal(sidecar.image, 'kuma/kuma-dp:9.9.9');
  t.equal(env(sidecar).KUMA_CONTROL_PLANE_URL, 'https://cp.example:5678');
  const bad = run(`${NS}---\n${deployment()}`, { functionConfig: cm.replace('"default: {}"', '"[default]"') });
  t.not(bad.exitCode, 0);
  t.match(bad.stderr, /kuma\.meshes must hold a YAML object; got a list/);
});

t.test("the driver's declarations: every reason described, opt-outs as data agreeing with check's rule", async (t) => {
  const { KUMA_REASON_INFO, KUMA_REASONS, kumaDriver } = await import('../../../src/drivers/kuma/index.ts');
  t.same(kumaDriver.reasons, KUMA_REASONS);
  for (const r of KUMA_REASONS) {
    t.ok(KUMA_REASON_INFO[r]!.description.length > 20, `${r} is described`);
    t.equal(
      KUMA_REASON_INFO[r]!.optOut,
      /(^|-)(false|disabled)$/.test(r),
      `${r}: opt-out flag agrees with the check's naming rule`,
    );
  }
});

t.test('keys named like Object.prototype members are plain keys (labels, env var maps, config maps)', async (t) => {
  for (const k of ['__proto__', 'constructor', 'toString']) {
    const dep = deployment(`\n        ${JSON.stringify(k)}: x`).replace(
      'labels:\n        app: web',
      `annotations:\n        kuma.io/sidecar-env-vars: "${k}=1;A=2"\n      labels:\n        app: web`,
    );
    const cfg = config(
      `\n    controlPlaneConfig: {runtime: {kubernetes: {injector: {exceptions: {labels: {${JSON.stringify(k)}: "z"}}, sidecarContainer: {envVars: {${JSON.stringify(k)}: "e"}}}}}}\n    meshes: {${JSON.stringify(k)}: {}, default: {}}`,
    );
    const out = run(`${NS}---\n${dep}`, { functionConfig: cfg });
    t.equal(out.exitCode, 0, `${k}: ${out.stderr}`);
    const e = env(byName(podOf(out.stdout).spec.containers, 'kuma-sidecar'));
    t.equal(e[k], '1', `${k}: the annotation's env var wins over the config's`);
    t.equal(e.A, '2');
  }
});

t.test("Kuma's logged warnings are warning results", async (t) => {
  const dep = deployment().replace(
    'labels:\n        app: web',
    'annotations:\n        kuma.io/gateway: "no"\n        kuma.io/transparent-proxying: disabled\n      labels:\n        app: web',
  );
  const out = run(`${NS}---\n${dep}`, { functionConfig: config() });
  t.equal(out.exitCode, 0, out.stderr);
  const warnings = out.results.filter((r) => r.severity === 'warning').map((r) => r.message);
  t.ok(
    warnings.some((w) => /kuma\.io\/gateway: "no" is deprecated, use "false"/.test(w)),
    'yes/no values',
  );
  t.ok(
    warnings.some((w) => /disabling transparent proxying is not supported on Kubernetes/.test(w)),
    'transparent proxying off',
  );
  const initUid = deployment(
    '',
    '\n      initContainers:\n      - name: setup\n        image: setup:1\n        securityContext: {runAsUser: 5678}',
  );
  const w2 = run(`${NS}---\n${initUid}`, { functionConfig: config() });
  t.equal(w2.exitCode, 0, w2.stderr);
  t.ok(
    w2.results.some(
      (r) => r.severity === 'warning' && /init container setup runs as the sidecar's UID 5678/.test(r.message),
    ),
    'an init container with the sidecar UID is a warning',
  );
});

t.test("the cluster's ConfigMaps in the input stand in for unset spec.kuma fields", async (t) => {
  const cms = `apiVersion: v1
kind: ConfigMap
metadata: {name: kuma-control-plane-config, namespace: kuma-system}
data:
  config.yaml: |
    runtime:
      kubernetes:
        injector:
          sidecarContainer:
            image: kuma/kuma-dp:7.7.7
---
apiVersion: v1
kind: ConfigMap
metadata: {name: kuma-transparent-proxy-config, namespace: kuma-system}
data:
  config.yaml: |
    kumaDPUser: "5678"
    redirect:
      dns:
        enabled: true
---
apiVersion: v1
kind: ConfigMap
metadata: {name: kuma-control-plane-config, namespace: elsewhere}
data:
  config.yaml: "runtime: {kubernetes: {injector: {sidecarContainer: {image: wrong}}}}"
`;
  const out = run(`${cms}---\n${NS}---\n${deployment()}`, { functionConfig: config() });
  t.equal(out.exitCode, 0, out.stderr);
  const pod = podOf(out.stdout);
  t.equal(
    byName(pod.spec.containers, 'kuma-sidecar')!.image,
    'kuma/kuma-dp:7.7.7',
    'the ConfigMap of the system namespace, not the other one',
  );
  t.match(
    pod.metadata.annotations!['traffic.kuma.io/transparent-proxy-config'],
    /^ {2}dns:\n {4}captureAll: false\n {4}enabled: true\n/m,
  );
  t.ok(
    out.results.some((r) =>
      /ConfigMap kuma-system\/kuma-control-plane-config in the input is used as spec\.kuma\.controlPlaneConfig/.test(
        r.message,
      ),
    ),
    'a note says which ConfigMap was used',
  );
  const set = run(`${cms}---\n${NS}---\n${deployment()}`, { functionConfig: config('\n    controlPlaneConfig: {}') });
  t.equal(
    byName(podOf(set.stdout).spec.containers, 'kuma-sidecar')!.image,
    'kuma/kuma-dp:latest',
    'an explicit controlPlaneConfig wins',
  );
  t.ok(
    set.results.some((r) =>
      /kuma-control-plane-config in the input is not used: spec\.kuma\.controlPlaneConfig is set/.test(r.message),
    ),
  );
  const broken = run(`${cms.replace('image: kuma/kuma-dp:7.7.7', 'uid: many')}---\n${NS}---\n${deployment()}`, {
    functionConfig: config(),
  });
  t.equal(broken.exitCode, 0, broken.stderr);
  t.ok(
    broken.results.some((r) =>
      /kuma-control-plane-config in the input is not used: .*sidecarContainer\.uid: json: cannot unmarshal string into Go struct field sidecarContainer\.uid of type int64/.test(
        r.message,
      ),
    ),
    'a ConfigMap with a bad value is not used, and the note says why',
  );
});

t.test('a ContainerPatch that renames a Kuma container is refused', async (t) => {
  const dep = deployment().replace(
    'labels:\n        app: web',
    'annotations:\n        kuma.io/container-patches: rename\n      labels:\n        app: web',
  );
  const out = run(`${NS}---\n${dep}`, {
    functionConfig: config(
      `\n    containerPatches:\n      rename: {initPatch: [{op: replace, path: /name, value: '"my-init"'}]}`,
    ),
  });
  t.equal(out.exitCode, 1);
  t.match(
    out.results.find((r) => r.severity === 'error')?.message,
    /patches \["rename"\] rename kuma-init to "my-init"/,
  );
});
