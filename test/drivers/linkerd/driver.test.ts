// The Linkerd driver on hand-written pods: config loading, the decision, injection, refusals, inventory.
// Expectations follow Linkerd's rules as written in pkg/inject/*.go and charts/partials (linkerd2 b24cd40),
// cited per test; they are not copied from the driver's output.
import t from 'tap';
import { createHash } from 'node:crypto';
import type { Config } from '../../../src/model.ts';
import type { WorkloadRef } from '../../../src/contract/driver.ts';
import { linkerdDriver, type LinkerdSettings } from '../../../src/drivers/linkerd/index.ts';
import { bindDriver } from '../../../src/contract/driver.ts';
import { decide as decideShared } from '../../../src/selection/policy.ts';
import { removeInventory } from '../../../src/drivers/linkerd/inventory.ts';
import { parseGoDuration, readQuantity, resolveOpaquePorts } from '../../../src/drivers/linkerd/overrides.ts';
import { nearestConfigKey } from '../../../src/drivers/linkerd/annotations.ts';
import { snakeCase } from '../../../src/drivers/linkerd/containers.ts';
import { podInboundPorts } from '../../../src/drivers/linkerd/inject.ts';
import type { JsonObject, NamespaceInfo, PodTemplate } from '../../../src/model.ts';
import { InjectError } from '../../../src/results/errors.ts';
import { loadConfig, loaded } from '../../helpers/config.ts';

const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

/** Loads a SidecarInjection with `spec.mesh: linkerd` and this `spec.linkerd`. */
function load(
  linkerd: JsonObject = {},
  spec: JsonObject = {},
): { config: Config; settings: LinkerdSettings; warnings: string[] } {
  const l = loaded({
    apiVersion: 'meshinject.dev/v1alpha1',
    kind: 'SidecarInjection',
    spec: { mesh: 'linkerd', ...spec, linkerd },
  });
  const r = loadConfig({
    apiVersion: 'meshinject.dev/v1alpha1',
    kind: 'SidecarInjection',
    spec: { mesh: 'linkerd', ...spec, linkerd },
  });
  if (!r.ok) throw new Error('unreachable');
  return { config: l.config, settings: r.settings as LinkerdSettings, warnings: l.warnings };
}

const manual = (values: JsonObject = {}, more: JsonObject = {}) =>
  load({ manual: true, values: { identityTrustAnchorsPEM: PEM, ...values }, ...more });
const deployment: WorkloadRef = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  name: 'web',
  namespace: 'shop',
  namespaceDefaulted: false,
};
const appPod = (annotations: Record<string, string> = {}, spec: JsonObject = {}): PodTemplate => ({
  metadata: { labels: { app: 'web' }, annotations },
  spec: { containers: [{ name: 'web', image: 'web:1', ports: [{ containerPort: 8080, name: 'http' }] }], ...spec },
});
const names = (list: unknown): string[] => ((list ?? []) as Array<{ name: string }>).map((c) => c.name);
const envOf = (c: JsonObject): Record<string, string | undefined> =>
  Object.fromEntries((c.env as Array<{ name: string; value?: string }>).map((e) => [e.name, e.value]));
const find = (list: unknown, name: string): JsonObject => ((list ?? []) as JsonObject[]).find((c) => c.name === name)!;

function inject(pod: PodTemplate, l: ReturnType<typeof load>, workload = deployment, namespace?: NamespaceInfo) {
  return linkerdDriver.inject({
    pod,
    workload,
    config: l.config,
    settings: l.settings,
    ...(namespace ? { namespace } : {}),
  });
}

t.test('config: defaults and checks', async (t) => {
  const d = load();
  t.equal(d.settings.manual, false);
  t.equal(d.settings.createdBy, 'meshinject');
  t.equal(d.settings.controlPlaneNamespace, 'linkerd');
  t.equal(d.settings.values.proxy.nativeSidecar, true, 'chart default proxy.nativeSidecar: true');
  t.equal(d.config.nativeSidecars, true, 'the resolved native-sidecar setting reaches the core config');
  t.equal(d.settings.values.proxy.ports.admin, 4191);

  const noAnchors = loadConfig({
    apiVersion: 'meshinject.dev/v1alpha1',
    kind: 'SidecarInjection',
    spec: { mesh: 'linkerd', linkerd: { manual: true } },
  });
  t.notOk(noAnchors.ok, 'manual without trust anchors is refused (the chart `required`s them)');
  if (!noAnchors.ok)
    t.match(
      noAnchors.issues.map((i) => i.path),
      ['spec.linkerd.values.identityTrustAnchorsPEM'],
    );

  const badType = loadConfig({
    apiVersion: 'meshinject.dev/v1alpha1',
    kind: 'SidecarInjection',
    spec: { mesh: 'linkerd', linkerd: { values: { proxy: { ports: { admin: 'x' } }, cniEnabled: 'yes' } } },
  });
  t.notOk(badType.ok);
  if (!badType.ok)
    t.same(badType.issues.map((i) => i.path).sort(), [
      'spec.linkerd.values.cniEnabled',
      'spec.linkerd.values.proxy.ports.admin',
    ]);

  const tracing = loadConfig({
    apiVersion: 'meshinject.dev/v1alpha1',
    kind: 'SidecarInjection',
    spec: { mesh: 'linkerd', linkerd: { values: { proxy: { tracing: { enabled: true } } } } },
  });
  t.notOk(tracing.ok, 'proxy tracing cannot be rendered faithfully: refused');

  const pasted = load({ values: 'proxy:\n  logLevel: debug\ncniEnabled: true\n' });
  t.equal(pasted.settings.values.proxy.logLevel, 'debug', 'values pasted as YAML text');
  t.equal(pasted.settings.values.cniEnabled, true);

  const helmNull = load({ values: { proxy: { inbound: { server: null } } } });
  t.same(helmNull.settings.values.proxy.inbound, {}, 'null deletes a chart default (Helm)');

  const explicit = load({ values: { proxy: { nativeSidecar: true } } }, { nativeSidecars: false });
  t.equal(explicit.settings.values.proxy.nativeSidecar, false, 'an explicit spec.nativeSidecars wins');
  t.match(
    explicit.warnings.join('\n'),
    /spec\.nativeSidecars \(false\) overrides spec\.linkerd\.values\.proxy\.nativeSidecar \(true\)/,
  );

  const typo = load({ overrideAnnotations: { 'config.linkerd.io/admin-prot': '1234' } });
  t.match(
    typo.warnings.join('\n'),
    /config\.linkerd\.io\/admin-prot is not a Linkerd setting.*did you mean config\.linkerd\.io\/admin-port\?/,
  );
  const foreign = loadConfig({
    apiVersion: 'meshinject.dev/v1alpha1',
    kind: 'SidecarInjection',
    spec: { mesh: 'linkerd', linkerd: { overrideAnnotations: { 'example.com/x': 'y' } } },
  });
  t.notOk(foreign.ok, 'an override that is not a Linkerd annotation is an error');

  const cm = loadConfig({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    data: {
      mesh: 'linkerd',
      'linkerd.manual': 'true',
      'linkerd.values': `identityTrustAnchorsPEM: "${PEM.replace(/\n/g, '\\n')}"\n`,
    },
  });
  t.ok(cm.ok, 'ConfigMap form');
  if (cm.ok) t.equal((cm.settings as LinkerdSettings).manual, true);
});

t.test('decision: linkerd.io/inject on the pod, else on the namespace', async (t) => {
  const { config, settings } = load();
  const decide = (pod: Record<string, string>, ns?: Record<string, string>) =>
    linkerdDriver.decide({
      podMeta: { annotations: pod },
      podSpec: {},
      hostNetwork: false,
      namespace: 'shop',
      ...(ns ? { namespaceInfo: { name: 'shop', labels: {}, annotations: ns } } : {}),
      namespaceLabels: {},
      config,
      settings,
    });
  t.match(decide({ 'linkerd.io/inject': 'enabled' }).verdict, { inject: true, reason: 'pod-annotation-enabled' });
  t.match(decide({ 'linkerd.io/inject': 'ingress' }).verdict, { inject: true, reason: 'pod-annotation-ingress' });
  t.match(
    decide({ 'linkerd.io/inject': 'disabled' }, { 'linkerd.io/inject': 'enabled' }).verdict,
    { inject: false, reason: 'pod-annotation-disabled' },
    'the pod wins over the namespace',
  );
  const nsEnabled = decide({}, { 'linkerd.io/inject': 'enabled' });
  t.equal(nsEnabled.verdict, undefined, 'the namespace does not decide before the shared selectors');
  // The decision the run takes (what explain, results and reports show): the shared steps with the driver bound.
  const decision = (ns: Record<string, string>, l = load()) =>
    decideShared({
      podMeta: { labels: { app: 'web' }, annotations: {} },
      podSpec: {},
      namespace: 'shop',
      namespaceInfo: { name: 'shop', labels: {}, annotations: ns },
      config: l.config,
      mesh: bindDriver(linkerdDriver, l.settings),
    });
  t.match(
    decision({ 'linkerd.io/inject': 'enabled' }),
    {
      inject: true,
      reason: 'namespace-annotation-enabled',
      detail: /namespace shop annotation linkerd\.io\/inject is "enabled"/,
    },
    'the namespace decides in place of policy',
  );
  t.match(decision({ 'linkerd.io/inject': 'disabled' }), { inject: false, reason: 'namespace-annotation-disabled' });
  t.match(
    decision({ 'linkerd.io/inject': 'enabled' }, load({}, { policy: 'disabled' })),
    { inject: true, reason: 'namespace-annotation-enabled' },
    'whatever the policy',
  );
  t.match(decision({ 'linkerd.io/inject': 'ingress' }), { inject: true, reason: 'namespace-annotation-ingress' });
  t.match(
    decision({ 'linkerd.io/inject': 'enabled' }, load({}, { neverInjectSelector: [{ matchLabels: { app: 'web' } }] })),
    { inject: false, reason: 'never-inject-selector' },
    'below the shared selectors',
  );
  t.match(
    decision({}, load({}, { policy: 'disabled' })),
    { inject: false, reason: 'policy-disabled' },
    'no annotation anywhere: the policy',
  );
  const none = decide({}, {});
  t.equal(none.verdict, undefined, 'nothing decides: the shared selectors and policy do');
  t.match(none.undecided, /no linkerd\.io\/inject annotation/);
  t.throws(
    () => decide({ 'linkerd.io/inject': 'true' }),
    InjectError,
    'an invalid pod value is an error (invalid_inject_annotation_at_workload)',
  );
  t.throws(() => decide({}, { 'linkerd.io/inject': 'on' }), InjectError, 'an invalid namespace value is an error');
  const label = linkerdDriver.decide({
    podMeta: { labels: { 'linkerd.io/inject': 'enabled' } },
    podSpec: {},
    hostNetwork: false,
    namespace: 'shop',
    namespaceLabels: {},
    config,
    settings,
  });
  t.equal(label.verdict, undefined, 'Linkerd reads annotations only');
});

t.test('manual injection: native sidecar layout, metadata, identity', async (t) => {
  const l = manual();
  const res = inject(appPod(), l);
  const spec = res.pod.spec;
  // patch.json with proxy.nativeSidecar: init container at 0, proxy at 1 with restartPolicy Always.
  t.same(names(spec.initContainers), ['linkerd-init', 'linkerd-proxy']);
  t.same(names(spec.containers), ['web']);
  t.same(names(spec.volumes), [
    'linkerd-proxy-init-xtables-lock',
    'linkerd-identity-end-entity',
    'linkerd-identity-token',
  ]);
  const proxy = find(spec.initContainers, 'linkerd-proxy');
  t.equal(proxy.restartPolicy, 'Always');
  t.same(proxy.startupProbe, { failureThreshold: 120, httpGet: { path: '/ready', port: 4191 }, periodSeconds: 1 });
  t.notOk(proxy.lifecycle, 'no linkerd-await hook for a native sidecar');
  t.equal(proxy.image, 'cr.l5d.io/linkerd/proxy:edge-26.8.3', 'image tag defaults to linkerdVersion');
  const env = envOf(proxy);
  t.equal(env.LINKERD2_PROXY_INBOUND_PORTS, '8080');
  t.equal(env.LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS, PEM);
  t.equal(env._l5d_ns, 'linkerd');
  t.equal(env.LINKERD2_PROXY_ADMIN_LISTEN_ADDR, '0.0.0.0:4191', 'disableIPv6 is the chart default');
  const ann = res.pod.metadata.annotations!;
  t.equal(ann['linkerd.io/created-by'], 'meshinject');
  t.equal(ann['linkerd.io/proxy-version'], 'edge-26.8.3');
  t.equal(ann['linkerd.io/trust-root-sha256'], createHash('sha256').update(PEM).digest('hex'));
  t.same(res.pod.metadata.labels, {
    app: 'web',
    'linkerd.io/control-plane-ns': 'linkerd',
    'linkerd.io/proxy-deployment': 'web',
    'linkerd.io/workload-ns': 'shop',
  });
  t.equal(res.summary, 'linkerd, manual, proxy edge-26.8.3');

  const again = inject(res.pod, l);
  t.same(again.pod, res.pod, 're-injection strips the previous proxy first: a second run changes nothing');
});

t.test('manual injection: classic sidecar, await, CNI, debug', async (t) => {
  const classic = inject(appPod(), manual({ proxy: { nativeSidecar: false } }));
  t.same(
    names(classic.pod.spec.containers),
    ['linkerd-proxy', 'web'],
    'proxy.await: the proxy goes first (containers/0)',
  );
  t.same(names(classic.pod.spec.initContainers), ['linkerd-init']);
  const proxy = find(classic.pod.spec.containers, 'linkerd-proxy');
  t.same((proxy.lifecycle as JsonObject).postStart, {
    exec: { command: ['/usr/lib/linkerd/linkerd-await', '--timeout=2m', '--port=4191'] },
  });
  t.notOk(proxy.restartPolicy);

  const noAwait = inject(
    appPod({ 'config.linkerd.io/proxy-await': 'disabled' }),
    manual({ proxy: { nativeSidecar: false } }),
  );
  t.same(names(noAwait.pod.spec.containers), ['web', 'linkerd-proxy'], 'proxy-await disabled: appended');

  const cni = inject(appPod(), manual({ cniEnabled: true }));
  t.same(names(cni.pod.spec.initContainers), ['linkerd-network-validator', 'linkerd-proxy']);
  t.notOk(names(cni.pod.spec.volumes).includes('linkerd-proxy-init-xtables-lock'), 'no xtables lock volume with CNI');

  const debug = inject(appPod(), manual({}, { debugSidecar: true }));
  t.same(names(debug.pod.spec.containers), ['web', 'linkerd-debug']);
  t.equal(debug.pod.metadata.annotations!['config.linkerd.io/enable-debug-sidecar'], 'true');
  t.equal(find(debug.pod.spec.containers, 'linkerd-debug').image, 'cr.l5d.io/linkerd/debug:edge-26.8.3');
});

t.test('override annotations: pod over configured overrides over namespace over values', async (t) => {
  const l = manual({}, { overrideAnnotations: { 'config.linkerd.io/admin-port': '1234' } });
  const ns: NamespaceInfo = {
    name: 'shop',
    labels: {},
    annotations: { 'config.linkerd.io/admin-port': '1111', 'config.linkerd.io/proxy-log-level': 'debug' },
  };
  const fromOverride = inject(appPod(), l, deployment, ns);
  const proxy = find(fromOverride.pod.spec.initContainers, 'linkerd-proxy');
  t.equal(envOf(proxy).LINKERD2_PROXY_ADMIN_LISTEN_ADDR, '0.0.0.0:1234', 'the configured override beats the namespace');
  t.equal(
    envOf(proxy).LINKERD2_PROXY_LOG,
    'debug,[{headers}]=off,[{request}]=off',
    'a namespace annotation is honoured',
  );
  t.equal(
    fromOverride.pod.metadata.annotations!['config.linkerd.io/admin-port'],
    '1234',
    'the override annotation is written',
  );
  t.notOk(
    fromOverride.pod.metadata.annotations!['config.linkerd.io/proxy-log-level'],
    'namespace annotations are not copied onto the pod',
  );
  const init = find(fromOverride.pod.spec.initContainers, 'linkerd-init');
  const args = init.args as string[];
  t.equal(
    args[args.indexOf('--inbound-ports-to-ignore') + 1],
    '4190,1234,4567,4568',
    'the control and admin ports are not redirected',
  );

  const own = inject(
    appPod({
      'config.linkerd.io/admin-port': '9998',
      'config.linkerd.io/proxy-cpu-request': '0.5',
      'config.linkerd.io/proxy-cpu-limit': '1500m',
    }),
    l,
    deployment,
    ns,
  );
  const p2 = find(own.pod.spec.initContainers, 'linkerd-proxy');
  t.equal(envOf(p2).LINKERD2_PROXY_ADMIN_LISTEN_ADDR, '0.0.0.0:9998', "the pod's own annotation wins and is kept");
  t.equal(own.pod.metadata.annotations!['config.linkerd.io/admin-port'], '9998');
  t.same(p2.resources, { limits: { cpu: '1500m' }, requests: { cpu: '0.5' } });
  t.equal(envOf(p2).LINKERD2_PROXY_CORES_MIN, '1', 'ToWholeCPUCores rounds 0.5 up');
  t.equal(envOf(p2).LINKERD2_PROXY_CORES_MAX, '2', 'ToWholeCPUCores rounds 1.5 up');

  const bad = inject(
    appPod({ 'config.linkerd.io/proxy-uid': 'root', 'config.linkerd.io/proxy-memmory-limit': '1Gi' }),
    l,
  );
  t.match(bad.warnings.join('\n'), /config\.linkerd\.io\/proxy-uid: "root" is not an integer; Linkerd ignores it/);
  t.match(
    bad.warnings.join('\n'),
    /proxy-memmory-limit is not a Linkerd setting.*did you mean config\.linkerd\.io\/proxy-memory-limit\?/,
  );
  t.equal(
    (find(bad.pod.spec.initContainers, 'linkerd-proxy').securityContext as JsonObject).runAsUser,
    2102,
    'the unparsable uid is ignored, as Linkerd does',
  );

  const opaque = inject(appPod({ 'config.linkerd.io/opaque-ports': 'http,9000-9002' }), l);
  t.equal(
    envOf(find(opaque.pod.spec.initContainers, 'linkerd-proxy'))
      .LINKERD2_PROXY_INBOUND_PORTS_DISABLE_PROTOCOL_DETECTION,
    '8080,9000-9002',
    'named ports are resolved',
  );

  const ingress = inject(appPod({ 'linkerd.io/inject': 'ingress' }), manual());
  t.equal(envOf(find(ingress.pod.spec.initContainers, 'linkerd-proxy')).LINKERD2_PROXY_INGRESS_MODE, 'true');
  t.equal(
    ingress.pod.metadata.annotations!['linkerd.io/inject'],
    'ingress',
    'the pod keeps its own opt-in, so a re-run decides the same',
  );
});

t.test('annotation-only injection (plain linkerd inject)', async (t) => {
  const l = load({ overrideAnnotations: { 'config.linkerd.io/default-inbound-policy': 'all-authenticated' } });
  const res = inject(appPod(), l);
  t.same(res.pod.metadata.annotations, {
    'config.linkerd.io/default-inbound-policy': 'all-authenticated',
    'linkerd.io/inject': 'enabled',
  });
  t.same(res.pod.spec, appPod().spec, 'no container is added');
  t.same(res.pod.metadata.labels, { app: 'web' }, 'no label is added');
  const ingress = inject(appPod(), load({ values: { proxy: { isIngress: true } } }));
  t.equal(ingress.pod.metadata.annotations!['linkerd.io/inject'], 'ingress');
  const cronjob = inject(appPod(), l, { ...deployment, kind: 'CronJob' });
  t.equal(cronjob.pod.metadata.annotations!['linkerd.io/inject'], 'enabled');
});

t.test("refusals: Linkerd's Injectable checks are error results", async (t) => {
  const l = manual();
  t.throws(() => inject(appPod({}, { hostNetwork: true }), l), {
    message: /hostNetwork is enabled/,
    field: 'spec.hostNetwork',
  });
  const istio = appPod(
    {},
    {
      containers: [
        { name: 'web', image: 'web:1' },
        { name: 'istio-proxy', image: 'docker.io/istio/proxyv2:1.31.0' },
      ],
    },
  );
  t.throws(() => inject(istio, l), { message: /pod has a sidecar injected already \(container istio-proxy\)/ });
  const noToken = appPod({}, { automountServiceAccountToken: false });
  t.doesNotThrow(() => inject(noToken, l), 'fine with token projection (the chart default)');
  t.throws(() => inject(noToken, manual({ identity: { serviceAccountTokenProjection: false } })), {
    message: /automountServiceAccountToken set to "false"/,
  });
  const cp = appPod();
  cp.metadata.labels!['linkerd.io/control-plane-component'] = 'tap';
  t.throws(() => inject(cp, load()), { message: /manual must be set when injecting control plane components/ });
  t.doesNotThrow(() => inject(cp, l), 'control-plane components are injected with manual');
  const udp = inject(
    appPod({}, { containers: [{ name: 'dns', image: 'dns:1', ports: [{ containerPort: 53, protocol: 'UDP' }] }] }),
    l,
  );
  t.match(udp.warnings.join('\n'), /UDP/, 'UDP is only a warning');
});

t.test('inventory: what linkerd uninject removes, and nothing else', async (t) => {
  const l = manual();
  t.equal(
    linkerdDriver.inventory(appPod({ 'config.linkerd.io/admin-port': '1' })),
    undefined,
    'config.linkerd.io keys are not Linkerd markers',
  );
  t.equal(linkerdDriver.inventory(appPod({ 'linkerd.io/inject': 'disabled' })), undefined, 'an opt-out is kept');
  const original = appPod(
    { 'example.com/keep': 'x' },
    { initContainers: [{ name: 'migrate', image: 'm:1' }], volumes: [{ name: 'data', emptyDir: {} }] },
  );
  const injected = inject(original, l).pod;
  const inv = linkerdDriver.inventory(injected)!;
  t.same(inv.initContainers, ['linkerd-init', 'linkerd-proxy']);
  t.same(inv.containers, []);
  t.same(inv.volumes, ['linkerd-proxy-init-xtables-lock', 'linkerd-identity-end-entity', 'linkerd-identity-token']);
  t.same(inv.annotations, ['linkerd.io/created-by', 'linkerd.io/proxy-version', 'linkerd.io/trust-root-sha256']);
  t.same(inv.labels, ['linkerd.io/control-plane-ns', 'linkerd.io/proxy-deployment', 'linkerd.io/workload-ns']);
  t.same(removeInventory(injected, inv), original, 'removing the inventory gives back the pod template');
  const ctx = { injected, workload: deployment, config: l.config };
  t.same(
    linkerdDriver.uninject!(removeInventory(injected, inv), inv, l.settings, ctx),
    original,
    'the uninject hook changes nothing more without configured override annotations',
  );
  const o = manual({}, { overrideAnnotations: { 'config.linkerd.io/admin-port': '1234' }, debugSidecar: true });
  const withOverrides = inject(original, o).pod;
  const invO = linkerdDriver.inventory(withOverrides)!;
  t.same(
    linkerdDriver.uninject!(removeInventory(withOverrides, invO), invO, o.settings, {
      ...ctx,
      injected: withOverrides,
    }),
    original,
    'the override annotations this configuration writes are removed',
  );

  const cp = appPod({ 'linkerd.io/created-by': 'x' });
  cp.metadata.labels!['linkerd.io/control-plane-component'] = 'tap';
  t.equal(linkerdDriver.inventory(cp), undefined, "a control-plane component's metadata is Linkerd's own");

  const ns = {
    apiVersion: 'v1',
    kind: 'Namespace',
    name: 'shop',
    namespace: '',
    labels: {},
    annotations: { 'linkerd.io/inject': 'enabled', 'config.linkerd.io/admin-port': '1' },
  };
  t.same(linkerdDriver.resourceInventory!(ns), { annotations: ['linkerd.io/inject'], labels: [] });
  t.equal(linkerdDriver.resourceInventory!({ ...ns, annotations: { 'linkerd.io/inject': 'disabled' } }), undefined);
});

t.test('Namespace and Service annotations', async (t) => {
  const l = load({ overrideAnnotations: { 'config.linkerd.io/opaque-ports': '4000' } });
  const annotate = (kind: string, name: string, annotations: Record<string, string> = {}) =>
    linkerdDriver.annotateResource!(
      { apiVersion: 'v1', kind, name, namespace: '', labels: {}, annotations },
      l.config,
      l.settings,
    );
  t.same(annotate('Namespace', 'shop')?.annotations, {
    'config.linkerd.io/opaque-ports': '4000',
    'linkerd.io/inject': 'enabled',
  });
  t.equal(
    annotate('Namespace', 'shop', { 'linkerd.io/inject': 'disabled' }),
    undefined,
    "a namespace's opt-out is kept",
  );
  t.equal(annotate('Namespace', 'kube-system'), undefined, 'ignored namespaces are left alone');
  const disabled = load({}, { policy: 'disabled' });
  t.equal(
    linkerdDriver.annotateResource!(
      { apiVersion: 'v1', kind: 'Namespace', name: 'shop', namespace: '', labels: {}, annotations: {} },
      disabled.config,
      disabled.settings,
    ),
    undefined,
    'with policy disabled an opt-in would change what the next run decides: left alone',
  );
  t.same(annotate('Service', 'web')?.annotations, { 'config.linkerd.io/opaque-ports': '4000' });
  t.equal(annotate('ConfigMap', 'x'), undefined);
  t.equal(
    linkerdDriver.annotateResource!(
      { apiVersion: 'v1', kind: 'Service', name: 'web', namespace: '', labels: {}, annotations: {} },
      load().config,
      load().settings,
    ),
    undefined,
    'no opaque-ports override: the Service is left alone',
  );
});

t.test('helpers: Go durations, quantities, snake case, ports', async (t) => {
  t.equal(parseGoDuration('1m30s'), 90);
  t.equal(parseGoDuration('100ms'), 0.1);
  t.equal(parseGoDuration('5'), undefined, 'a unit is required');
  t.match(readQuantity('500m'), { unscaled: 500n, exponent: -3 });
  t.match(readQuantity('1Gi'), { unscaled: 2n ** 30n, exponent: 0 });
  t.equal(readQuantity('1 core'), undefined);
  t.equal(snakeCase('keepAliveInterval'), 'keep_alive_interval');
  t.equal(snakeCase('HTTPServer'), 'http_server');
  const warnings: string[] = [];
  t.equal(resolveOpaquePorts('80,web,7-9,x-1', new Map([['web', 8080]]), warnings), '80,8080,7-9');
  t.equal(warnings.length, 1);
  t.equal(
    podInboundPorts({
      containers: [
        {
          name: 'a',
          ports: [{ containerPort: 9090 }, { containerPort: 80 }],
          readinessProbe: { httpGet: { port: 10000 } },
        },
      ],
    }),
    '10000,80,9090',
    'sorted as strings, as Go sort.Strings does',
  );
  t.equal(nearestConfigKey('config.linkerd.io/proxy-cpu-requst'), 'config.linkerd.io/proxy-cpu-request');
});

t.test('override values are read as Linkerd reads them with Go (ParseQuantity, ParseFloat, ParseUint)', async (t) => {
  const l = manual({ proxy: { nativeSidecar: false } });
  const proxyOf = (annotations: Record<string, string>) => {
    const r = inject(appPod(annotations), l);
    return { proxy: find(r.pod.spec.containers, 'linkerd-proxy'), warnings: r.warnings.join('\n') };
  };
  const preStop = (c: JsonObject) =>
    (c.lifecycle as { preStop?: { exec: { command: string[] } } })?.preStop?.exec.command;
  const WAIT = 'config.alpha.linkerd.io/proxy-wait-before-exit-seconds';
  const RATIO = 'config.linkerd.io/proxy-cpu-ratio-limit';
  // Go accepts: a hex float, underscores between digits; ParseUint takes leading zeros.
  let r = proxyOf({ [RATIO]: '0x1p-1', [WAIT]: '007' });
  t.equal(envOf(r.proxy).LINKERD2_PROXY_CORES_MAX_RATIO, '0.5', 'ParseFloat("0x1p-1") is 0.5');
  t.same(preStop(r.proxy), ['/bin/sleep', '7'], 'ParseUint("007") is 7');
  t.equal(r.warnings, '');
  r = proxyOf({ [RATIO]: '0.2_5' });
  t.equal(envOf(r.proxy).LINKERD2_PROXY_CORES_MAX_RATIO, '0.25');
  // Go refuses: a sign on ParseUint, blanks, a trailing underscore; Linkerd logs and ignores the value.
  for (const [k, v] of [
    [WAIT, '+4'],
    [WAIT, ' 4'],
    [RATIO, '0.5 '],
    [RATIO, '0.5_'],
  ] as const) {
    r = proxyOf({ [k]: v });
    t.match(
      r.warnings,
      `annotation ${k}: "${v}" is not`,
      `${k}: ${JSON.stringify(v)} is refused, named in the warning`,
    );
    t.equal(envOf(r.proxy).LINKERD2_PROXY_CORES_MAX_RATIO, undefined);
    t.equal(preStop(r.proxy), undefined);
  }
  // ParseQuantity: `.5` and `1.` are quantities to Go; `1 ` and `1K` are not.
  r = proxyOf({ 'config.linkerd.io/proxy-cpu-limit': '1.', 'config.linkerd.io/proxy-cpu-request': '.5' });
  t.equal(envOf(r.proxy).LINKERD2_PROXY_CORES_MAX, '1');
  t.equal(envOf(r.proxy).LINKERD2_PROXY_CORES_MIN, '1');
  for (const v of ['1 ', '1K']) {
    r = proxyOf({ 'config.linkerd.io/proxy-memory-limit': v });
    t.match(r.warnings, `annotation config.linkerd.io/proxy-memory-limit: "${v}" is not a Kubernetes quantity`);
    t.notMatch(JSON.stringify(r.proxy.resources ?? {}), v.trim(), 'the refused value is not written');
  }
});
