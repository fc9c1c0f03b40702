// The TestInjection cases of one Istio tag: the explicit table plus the auto-discovered goldens, with what the
// harness does for each (settings, mesh mutation, native sidecars, comparisons), as data for the corpus writer.
import { parseCaseTable } from './go-source.mjs';

/**
 * Mesh mutations (`mesh: func(m *meshapi.MeshConfig)`) the tables use, as the JSON the mesh config gets. A mesh func
 * not listed here stops the import: add its JSON form (and a note when its meaning is not a plain merge).
 */
const MESH_FUNCS = {
  'func { m.DefaultConfig.InterceptionMode = meshapi.ProxyConfig_TPROXY }': {
    delta: { defaultConfig: { interceptionMode: 'TPROXY' } },
  },
  'func { m.DefaultConfig.DrainDuration = durationpb.New(time.Second * 23) }': {
    delta: { defaultConfig: { drainDuration: '23s' } },
  },
  'func { if m.DefaultConfig.ProxyMetadata == nil { m.DefaultConfig.ProxyMetadata = map[string]string{} } m.DefaultConfig.ProxyMetadata["ISTIO_META_TLS_CLIENT_KEY"] = "/etc/identity/client/keys/client-key.pem" }':
    {
      delta: {
        defaultConfig: { proxyMetadata: { ISTIO_META_TLS_CLIENT_KEY: '/etc/identity/client/keys/client-key.pem' } },
      },
    },
  'func { m.DefaultConfig.Tracing = &meshapi.Tracing{} }': {
    delta: { defaultConfig: { tracing: {} } },
    note: 'mesh func sets DefaultConfig.Tracing to an empty Tracing message (no tracer): replace, not merge',
  },
  'func { m.InboundTrafficPolicy = &meshapi.MeshConfig_InboundTrafficPolicy{ Mode: meshapi.MeshConfig_InboundTrafficPolicy_LOCALHOST, } }':
    { delta: { inboundTrafficPolicy: { mode: 'LOCALHOST' } } },
  'func { m.ExtensionProviders = append(m.ExtensionProviders, &meshapi.MeshConfig_ExtensionProvider{ Name: "otel", Provider: &meshapi.MeshConfig_ExtensionProvider_Opentelemetry{ Opentelemetry: &meshapi.MeshConfig_ExtensionProvider_OpenTelemetryTracingProvider{ Service: "otel-collector.observability.svc.cluster.local", Port: 4317, ServiceAttributeEnrichment: meshapi.MeshConfig_ExtensionProvider_OTEL_SEMANTIC_CONVENTIONS, }, }, }) }':
    {
      delta: {
        extensionProviders: [
          {
            name: 'otel',
            opentelemetry: {
              service: 'otel-collector.observability.svc.cluster.local',
              port: 4317,
              serviceAttributeEnrichment: 'OTEL_SEMANTIC_CONVENTIONS',
            },
          },
        ],
      },
      note: "mesh func appends an OpenTelemetry extension provider to DefaultMeshConfig's; Istio's ApplyMeshConfig merges providers by name, so the delta lists only the new one",
    },
};

/** `setup` funcs: the process environment and feature flags they set. */
const SETUPS = {
  'func { test.SetEnvForTest(t, features.EnableNativeSidecars.Name, "true") }': {
    env: { ENABLE_NATIVE_SIDECARS: 'true' },
    native: true,
  },
  'func { test.SetEnvForTest(t, features.EnableNativeSidecars.Name, "false") }': {
    env: { ENABLE_NATIVE_SIDECARS: 'false' },
    native: false,
  },
  'func { test.SetForTest(t, &features.EnableNativeSidecars, features.NativeSidecarModeDisabled) }': {
    native: false,
    mode: 'NativeSidecarModeDisabled',
  },
  'func { test.SetEnvForTest(t, platform.Platform.Name, platform.OpenShift) }': { env: { PLATFORM: 'openshift' } },
  'func { test.SetForTest(t, &common_features.CompliancePolicy, "fips-140-3") }': { compliancePolicy: 'fips-140-3' },
};

/** Expected log lines the runner can check as a warning (`expectWarningContaining`). */
const WARNINGS = [[/has host networking enabled/, 'host network']];

/** The case name of a golden: `hello.yaml.cni.injected` → `hello-cni`, `ready_live.yaml.injected` → `ready-live`. */
export function caseName(c) {
  const file = c.want || c.in;
  return file
    .replace(/\.injected$/, '')
    .replace(/\.yaml/, '')
    .replace(/[._]/g, '-');
}

/** How a tag's harness decides native sidecars: from the sidecar env var (≤1.26) or the `auto` mode with fake nodes (1.28+). */
export function nativeModel(minor, testSrc) {
  if (minor <= 26) return { kind: 'env', default: false, text: 'false (ENABLE_NATIVE_SIDECARS defaults to false)' };
  if (!/KubeletVersion:\s*"v1\.3[3-9]/.test(testSrc))
    throw new Error('TestInjection has no fake nodes with kubelet >= 1.33: native sidecar default unknown');
  return {
    kind: 'auto',
    default: true,
    text: "true (ENABLE_NATIVE_SIDECARS is auto; TestInjection's fake nodes run kubelet v1.33 and v1.34)",
  };
}

function settingsKey(c) {
  return JSON.stringify([c.setFlags ?? null, c.inFilePath ?? '', c.mesh ?? '', c.setup ?? '']);
}

/** One case's harness facts: native sidecars, process env, mesh delta, notes. */
function describe(c, model) {
  const setup = c.setup ? SETUPS[c.setup] : undefined;
  if (c.setup && !setup)
    throw new Error(
      `unknown setup func in case ${c.in}: ${c.setup}; add it to SETUPS in scripts/istio-release/cases.mjs`,
    );
  const mesh = c.mesh ? MESH_FUNCS[c.mesh] : undefined;
  if (c.mesh && !mesh)
    throw new Error(
      `unknown mesh func in case ${c.in}: ${c.mesh}; add it to MESH_FUNCS in scripts/istio-release/cases.mjs`,
    );
  let native = model.default;
  let nativeText = model.text;
  if (setup?.native !== undefined) {
    native = setup.native;
    nativeText =
      setup.env?.ENABLE_NATIVE_SIDECARS !== undefined
        ? `${native} (setup: ENABLE_NATIVE_SIDECARS=${setup.env.ENABLE_NATIVE_SIDECARS})`
        : `${native} (setup: EnableNativeSidecars = ${setup.mode})`;
  }
  const warning = c.expectedLog ? WARNINGS.find(([re]) => re.test(c.expectedLog))?.[1] : undefined;
  return {
    native,
    nativeText,
    processEnv: setup?.env,
    meshDelta: mesh?.delta,
    meshNote: mesh?.note,
    warning,
    compliancePolicy: setup?.compliancePolicy,
  };
}

/**
 * Every TestInjection case of the tag in harness order (table, then `testdata/inject/*.yaml` whose golden the table
 * does not name), each with its index, name, facts, and why it is excluded (webhook-only, exact duplicate) if so.
 */
export function listCases(testSrc, injectFiles, minor) {
  const table = parseCaseTable(testSrc);
  const tested = new Set(table.map((c) => c.want || `${c.in}.injected`));
  const auto = injectFiles
    .filter((f) => f.endsWith('.yaml') && !f.endsWith('.iop.yaml') && !tested.has(`${f}.injected`))
    .map((f) => ({ in: f, want: `${f}.injected` }));
  const model = nativeModel(minor, testSrc);
  const seen = new Map();
  const all = [...table.map((c) => ({ c, explicit: true })), ...auto.map((c) => ({ c, explicit: false }))];
  return {
    model,
    explicit: table.length,
    auto: auto.length,
    cases: all.map(({ c, explicit }, index) => {
      const facts = describe(c, model);
      let name = caseName(c);
      let excluded;
      const first = seen.get(name);
      if (c.skipInjection)
        excluded = `webhook-only: the harness skips kube-inject (skipInjection) and compares this golden only through the admission webhook (pod JSON)${c.setup && SETUPS[c.setup].env ? `; setup ${pyDict(SETUPS[c.setup].env)}` : ''}`;
      else if (first && first.key === settingsKey(c))
        excluded = `exact duplicate of [${first.index}] (same input, golden and settings)`;
      else if (first) name = `${name}-native-${facts.native ? 'on' : 'off'}`;
      if (!first && !c.skipInjection) seen.set(name, { index, key: settingsKey(c) });
      return { index, c, explicit, name, facts, excluded };
    }),
  };
}

/** Python's `repr` of a string dict (the corpus notes' style). */
export function pyDict(o) {
  return `{${Object.entries(o)
    .map(([k, v]) => `'${k}': '${v}'`)
    .join(', ')}}`;
}
