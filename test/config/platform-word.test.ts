// Issue #36 §3, the platform's word: with --platform-config, a tenant's layer may only narrow the fields the platform
// owns (src/config/platform-word.ts). Generated: for every owned field, tenant layers that widen it in every way
// (raise, empty, remove with null, replace), on every driver's own fields (templates, values, patches), with the
// tenant's layer before or after the platform's on the command line: each run fails (exit 1, nothing written) with
// an error naming the field, the tenant's file and the platform's. Tenant layers that narrow are accepted and have
// the narrower effect (the workload the platform alone injects is left alone, a lowered budget stops the render).
import t, { type Test } from 'tap';
import fc from 'fast-check';
import { run } from '../../src/run.ts';
import { DEFAULT_TEMPLATE_BUDGETS, TEMPLATE_BUDGET_CEILINGS } from '../../src/render/budget.ts';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 100);
const INPUT = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web, tier: front}}
    spec: {containers: [{name: web, image: web:1}]}
`;
type Spec = Record<string, unknown>;
const layer = (spec: Spec) => JSON.stringify({ apiVersion: 'meshinject.dev/v1alpha1', kind: 'SidecarInjection', spec });
const PLATFORM = '--platform-config platform.yaml';
const TENANT = '--config tenant.yaml';

/** Runs the Deployment under the platform's layer and the tenant's (in the order given). */
function layered(platform: Spec, tenant: Spec | undefined, tenantFirst = false) {
  const p = { name: PLATFORM, text: layer(platform), platform: true };
  const list =
    tenant === undefined
      ? [p]
      : tenantFirst
        ? [{ name: TENANT, text: layer(tenant) }, p]
        : [p, { name: TENANT, text: layer(tenant) }];
  return run(INPUT, { functionConfigs: list, inputName: 'app.yaml' });
}
const injected = (stdout: string) => /meshinject\.dev\/injection: ['"]?injected/.test(stdout);

/** A valid section per mesh, and a tenant's change to each of its platform-owned fields (a valid value too). */
const CUSTOM_TEMPLATE = 'spec:\n  containers:\n  - {name: shipper, image: "s:1"}\n';
const MESHES: Record<string, { base: Spec; changes: Record<string, unknown> }> = {
  istio: {
    base: { istio: { values: { global: { hub: 'docker.io/istio' } } } },
    changes: {
      values: { global: { hub: 'evil.example/istio' } },
      injectorConfig: { policy: 'enabled', templates: { sidecar: 'spec: {}\n' } },
    },
  },
  linkerd: { base: {}, changes: { values: { proxy: { logLevel: 'debug' } } } },
  kuma: {
    base: {},
    changes: {
      containerPatches: { p: { sidecarPatch: [{ op: 'add', path: '/x', value: '"1"' }] } },
      controlPlaneConfig: { runtime: { kubernetes: { injector: { sidecarContainer: { image: 'evil' } } } } },
    },
  },
  osm: { base: {}, changes: { meshConfig: { sidecar: { logLevel: 'debug' } } } },
  fsm: { base: {}, changes: { meshConfig: { sidecar: { logLevel: 'debug' } } } },
  custom: {
    base: { custom: { templates: { sidecar: CUSTOM_TEMPLATE } } },
    changes: { templates: { sidecar: CUSTOM_TEMPLATE.replace('s:1', 'evil:1') }, values: { image: 'evil' } },
  },
};

/** One widening: the platform's spec, the tenant's, and the field path the error names. */
interface Widening {
  field: string;
  platform: Spec;
  tenant: Spec;
}

const word = fc.stringMatching(/^[a-z][a-z0-9]{0,6}$/);
const selector = fc.tuple(word, word).map(([k, v]) => ({ matchLabels: { [k]: v } }));
const BUDGETS = ['steps', 'outputSize', 'runSteps', 'runOutputSize'] as const;
const KINDS = ['Deployment', 'Job', 'CronJob', 'StatefulSet'];

/** Widenings of the core fields, in every way that applies (raise, empty, remove, replace). */
const coreWidening: fc.Arbitrary<Widening> = fc.oneof(
  fc
    .constantFrom<Spec>({ policy: 'enabled' }, { policy: null })
    .map((tenant) => ({ field: 'policy', platform: { policy: 'disabled' }, tenant })),
  fc.tuple(word, word, word).chain(([k, v, other]) =>
    fc
      .constantFrom<Spec>(
        { namespaceSelector: null },
        { namespaceSelector: { matchLabels: null } },
        { namespaceSelector: { matchLabels: { [k]: `${v}x` } } },
        { namespaceSelector: { matchLabels: { [k]: null, [`${other}y`]: v } } },
      )
      .map((tenant) => ({
        field: 'namespaceSelector',
        platform: { namespaceSelector: { matchLabels: { [k]: v } } },
        tenant,
      })),
  ),
  fc.uniqueArray(word, { minLength: 1, maxLength: 4 }).chain((names) => {
    const list = [...names, 'tenant-x'];
    return fc
      .constantFrom<Spec>(
        { ignoredNamespaces: [] },
        { ignoredNamespaces: null },
        { ignoredNamespaces: list.slice(1) },
        { ignoredNamespaces: list.slice(0, -1) },
      )
      .map((tenant) => ({ field: 'ignoredNamespaces', platform: { ignoredNamespaces: list }, tenant }));
  }),
  fc
    .tuple(selector, selector)
    .filter(([a, b]) => JSON.stringify(a) !== JSON.stringify(b))
    .chain(([a, b]) =>
      fc
        .constantFrom<Spec>({ neverInjectSelector: [] }, { neverInjectSelector: null }, { neverInjectSelector: [b] })
        .map((tenant) => ({ field: 'neverInjectSelector', platform: { neverInjectSelector: [a] }, tenant })),
    ),
  fc
    .tuple(fc.array(selector, { maxLength: 2 }), selector)
    .filter(([list, b]) => !list.some((s) => JSON.stringify(s) === JSON.stringify(b)))
    .chain(([list, b]) =>
      fc
        .constantFrom<Spec>({ alwaysInjectSelector: [...list, b] }, { alwaysInjectSelector: [b] })
        .map((tenant) => ({ field: 'alwaysInjectSelector', platform: { alwaysInjectSelector: list }, tenant })),
    ),
  fc
    .tuple(fc.constantFrom(...KINDS), fc.constantFrom('native', 'skip'))
    .chain(([kind, policy]) =>
      fc
        .constantFrom<Spec>(
          { kindPolicies: { [kind]: 'inject' } },
          { kindPolicies: { [kind]: null } },
          { kindPolicies: null },
          ...(policy === 'skip' ? [{ kindPolicies: { [kind]: 'native' } }] : []),
        )
        .map((tenant) => ({ field: 'kindPolicies', platform: { kindPolicies: { [kind]: policy } }, tenant })),
    ),
  fc.tuple(fc.boolean(), fc.constantFrom('CronTab', 'Rollout', 'Workflow')).chain(([has, kind]) => {
    const mine = { kind: 'Mine', apiVersion: 'example.com/v1', templatePath: 'spec.template' };
    const theirs = { kind, apiVersion: 'example.com/v1', templatePath: 'spec.pod' };
    return fc
      .constantFrom<Spec>({ workloadKinds: [...(has ? [mine] : []), theirs] }, { workloadKinds: [theirs] })
      .map((tenant) => ({ field: 'workloadKinds', platform: { workloadKinds: has ? [mine] : [] }, tenant }));
  }),
  fc.constantFrom(...BUDGETS).chain((key) =>
    fc
      .tuple(
        fc.integer({ min: 1, max: DEFAULT_TEMPLATE_BUDGETS[key] - 1 }),
        fc.integer({ min: 1, max: TEMPLATE_BUDGET_CEILINGS[key] }),
      )
      .chain(([mine, up]) => {
        const raised = Math.min(TEMPLATE_BUDGET_CEILINGS[key], mine + up);
        return fc
          .constantFrom<Spec>(
            { templateBudget: { [key]: raised } },
            { templateBudget: { [key]: null } },
            { templateBudget: null },
            { templateBudget: { [key]: TEMPLATE_BUDGET_CEILINGS[key] } },
          )
          .map((tenant) => ({ field: `templateBudget.${key}`, platform: { templateBudget: { [key]: mine } }, tenant }));
      }),
  ),
);

/** Widenings of a driver's own fields: the tenant sets, replaces or removes one the platform has. */
const driverWidening: fc.Arbitrary<Widening & { mesh: string }> = fc
  .constantFrom(...Object.keys(MESHES))
  .chain((mesh) => {
    const { base, changes } = MESHES[mesh]!;
    return fc.constantFrom(...Object.keys(changes)).chain((field) =>
      fc.constantFrom<'set' | 'remove' | 'mesh'>('set', 'remove', 'mesh').map((how) => {
        // (Removing the custom mesh's templates leaves a config that does not load: an error of its own.)
        const removing = how === 'remove' && !(mesh === 'custom' && field === 'templates');
        const platformSection = {
          ...(base[mesh] as Spec | undefined),
          ...(removing ? { [field]: changes[field] } : {}),
        };
        const platform: Spec = { mesh, ...(Object.keys(platformSection).length ? { [mesh]: platformSection } : {}) };
        if (how === 'mesh')
          return { mesh, field: 'mesh', platform, tenant: { mesh: mesh === 'istio' ? 'linkerd' : 'istio' } };
        return {
          mesh,
          field: `${mesh}.${field}`,
          platform,
          tenant: { [mesh]: { [field]: removing ? null : changes[field] } },
        };
      }),
    );
  });

/** Fields a tenant may set freely: noise in the tenant's layer that must not change the verdict. */
const freeNoise = fc.record(
  {
    nativeSidecars: fc.boolean(),
    resultAnnotations: fc.constant(true),
    defaultNamespace: fc.constantFrom('default', 'shop'),
  },
  { requiredKeys: [] },
);

function widens(t: Test, w: Widening, out: ReturnType<typeof run>, label: string): void {
  t.equal(out.exitCode, 1, `${label}: exit 1`);
  t.equal(out.stdout, '', `${label}: nothing written`);
  t.match(
    out.stderr,
    `functionConfig: spec.${w.field}: ${TENANT} widens the platform's value (${PLATFORM}`,
    `${label}: names the field and both files`,
  );
}

t.test(
  'a tenant layer widening a core field the platform owns is refused, in every way and either order',
  async (t) => {
    fc.assert(
      fc.property(
        coreWidening,
        fc.constantFrom('istio', 'custom'),
        freeNoise,
        fc.boolean(),
        (w, mesh, noise, tenantFirst) => {
          const platform = { mesh, ...MESHES[mesh]!.base, ...w.platform };
          const out = layered(platform, { ...noise, ...w.tenant }, tenantFirst);
          widens(
            t,
            w,
            out,
            `${JSON.stringify(w.platform)} / ${JSON.stringify(w.tenant)} (${mesh}${tenantFirst ? ', tenant first' : ''})`,
          );
          // The platform's layer alone is a config that loads: the failure is the tenant's widening, not a broken base.
          t.notMatch(layered(platform, undefined).stderr, /widens|functionConfig: spec\./, 'the platform alone loads');
        },
      ),
      { numRuns: RUNS },
    );
  },
);

t.test(
  "a tenant layer setting, replacing or removing a driver's own fields (templates, values, patches) is refused",
  async (t) => {
    fc.assert(
      fc.property(driverWidening, fc.boolean(), (w, tenantFirst) => {
        const out = layered(w.platform, w.tenant, tenantFirst);
        widens(t, w, out, `${w.mesh}: ${JSON.stringify(w.platform)} / ${JSON.stringify(w.tenant)}`);
      }),
      { numRuns: RUNS },
    );
  },
);

/** A platform under which the Deployment is injected, and tenant layers that each narrow one field so that it is not. */
const BASE: Spec = {
  policy: 'enabled',
  namespaceSelector: { matchLabels: { mesh: 'on' } },
  namespaces: [{ name: 'shop', labels: { mesh: 'on' } }],
  ignoredNamespaces: ['kube-system'],
  neverInjectSelector: [{ matchLabels: { tier: 'never' } }],
  kindPolicies: { Job: 'native' },
  templateBudget: { steps: 400_000 },
};
const narrowing: fc.Arbitrary<{ field: string; platform?: Spec; tenant: Spec }> = fc.oneof(
  fc.constant({ field: 'policy', tenant: { policy: 'disabled' } }),
  fc
    .constantFrom<Spec>(
      { matchLabels: { extra: 'yes' } },
      { matchExpressions: [{ key: 'extra', operator: 'Exists' }] },
      { matchLabels: { mesh: 'on', zone: 'a' } },
    )
    .map((sel) => ({ field: 'namespaceSelector', tenant: { namespaceSelector: sel } })),
  fc.uniqueArray(word, { maxLength: 3 }).map((more) => ({
    field: 'ignoredNamespaces',
    tenant: {
      ignoredNamespaces: ['kube-system', 'shop', ...more.filter((m) => m !== 'shop' && m !== 'kube-system')],
    },
  })),
  fc.constantFrom({ app: 'web' }, { tier: 'front' }).map((l) => ({
    field: 'neverInjectSelector',
    tenant: { neverInjectSelector: [{ matchLabels: { tier: 'never' } }, { matchLabels: l }] },
  })),
  fc
    .constantFrom<Spec>({ Deployment: 'skip' }, { Deployment: 'skip', Job: 'skip' })
    .map((k) => ({ field: 'kindPolicies', tenant: { kindPolicies: k } })),
  fc.constantFrom<Spec>({ alwaysInjectSelector: [] }, { alwaysInjectSelector: null }).map((tenant) => ({
    field: 'alwaysInjectSelector',
    platform: { policy: 'disabled', alwaysInjectSelector: [{ matchLabels: { app: 'web' } }] },
    tenant,
  })),
);

t.test('a tenant layer narrowing a field the platform owns is accepted and narrows', async (t) => {
  fc.assert(
    fc.property(
      narrowing,
      fc.constantFrom('istio', 'custom'),
      freeNoise,
      fc.boolean(),
      (n, mesh, noise, tenantFirst) => {
        const platform = { mesh, ...MESHES[mesh]!.base, ...BASE, ...n.platform };
        const alone = layered(platform, undefined);
        t.ok(
          alone.exitCode === 0 && injected(alone.stdout),
          `${mesh}, ${n.field}: the platform alone injects web (${alone.stderr})`,
        );
        const out = layered(platform, { ...noise, ...n.tenant }, tenantFirst);
        t.equal(out.exitCode, 0, `${mesh}, ${JSON.stringify(n.tenant)}: accepted (${out.stderr})`);
        t.notOk(injected(out.stdout), `${mesh}, ${JSON.stringify(n.tenant)}: web is left alone (the narrower effect)`);
      },
    ),
    { numRuns: RUNS },
  );
});

t.test('a tenant layer lowering a template budget is accepted and the lower budget stops the render', async (t) => {
  fc.assert(
    fc.property(
      fc.constantFrom<[string, string, number]>(
        ['istio', 'steps', 1],
        ['istio', 'outputSize', 5],
        ['custom', 'outputSize', 5],
      ),
      ([mesh, key, value]) => {
        const platform = { mesh, ...MESHES[mesh]!.base, ...BASE };
        const out = layered(platform, { templateBudget: { [key]: value } });
        t.equal(out.exitCode, 1, `${mesh}: templateBudget.${key} ${value}: the render fails`);
        t.match(
          out.stderr,
          new RegExp(`budget[^\\n]*spec\\.templateBudget\\.${key}`),
          'on the budget the tenant lowered',
        );
        t.notMatch(out.stderr, /widens/, 'not as a widening');
      },
    ),
    { numRuns: 8 },
  );
});

t.test('without --platform-config, --config layers override each other as before', async (t) => {
  const out = run(INPUT, {
    functionConfigs: [
      { name: '--config a.yaml', text: layer({ templateBudget: { steps: 10 }, ignoredNamespaces: ['shop'] }) },
      { name: '--config b.yaml', text: layer({ templateBudget: null, ignoredNamespaces: [] }) },
    ],
  });
  t.equal(out.exitCode, 0, 'a later --config may widen an earlier one');
  t.ok(injected(out.stdout), 'and does');
});

t.test("the --mesh and --policy flags are the tenant's too: they may narrow, not widen", async (t) => {
  const platform = {
    name: PLATFORM,
    text: layer({ mesh: 'istio', policy: 'disabled', alwaysInjectSelector: [{ matchLabels: { app: 'web' } }] }),
    platform: true,
  };
  const flag = (field: 'mesh' | 'policy', value: string) =>
    run(INPUT, { functionConfigs: [platform], overrides: { core: [{ field, value, from: `--${field}` }] } });
  const enable = flag('policy', 'enabled');
  t.equal(enable.exitCode, 1, '--policy enabled over a platform that disables: exit 1');
  t.match(enable.stderr, `functionConfig: spec.policy: --policy widens the platform's value (${PLATFORM}`);
  const mesh = flag('mesh', 'linkerd');
  t.match(
    mesh.stderr,
    `functionConfig: spec.mesh: --mesh widens the platform's value (${PLATFORM}`,
    '--mesh another mesh than the platform set',
  );
  const open = run(INPUT, {
    functionConfigs: [{ name: PLATFORM, text: layer({ policy: 'enabled' }), platform: true }],
    overrides: { core: [{ field: 'policy', value: 'disabled', from: '--policy' }] },
  });
  t.equal(open.exitCode, 0, '--policy disabled under an enabling platform: accepted');
  t.notOk(injected(open.stdout), 'and nothing is injected');
});

t.test("the platform's layers must load on their own: a tenant cannot complete them", async (t) => {
  const out = layered({ mesh: 'custom' }, { custom: { templates: { sidecar: CUSTOM_TEMPLATE } } });
  t.equal(out.exitCode, 1, 'exit 1');
  t.equal(out.stdout, '', 'nothing written');
  t.match(
    out.stderr,
    `functionConfig: the platform's ${PLATFORM} do not load on their own`,
    'says so, naming the platform file',
  );
});
