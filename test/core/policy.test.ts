import t from 'tap';
import type { NamespaceInfo } from '../../src/model.ts';
import { decide, type DecideInput } from '../../src/selection/policy.ts';
import { loadSpec, type Loaded } from '../helpers/config.ts';

const INJECT = 'sidecar.istio.io/inject';

/** A validated config from a SidecarInjection spec (through the real loader). */
function config(spec: Record<string, unknown> = {}): Loaded {
  return loadSpec(spec);
}

function ns(name: string, labels: Record<string, string> = {}): NamespaceInfo {
  return { name, labels, annotations: {} };
}

interface PodOpts {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  hostNetwork?: boolean;
  namespace?: string;
  namespaceInfo?: NamespaceInfo | null;
}

/** Decision for a pod in namespace `apps` (known, unlabelled unless given). */
function run(cfg: Loaded, o: PodOpts = {}) {
  const namespace = o.namespace ?? 'apps';
  const input: DecideInput = {
    podMeta: { labels: o.labels ?? {}, annotations: o.annotations ?? {} },
    podSpec: o.hostNetwork === undefined ? {} : { hostNetwork: o.hostNetwork },
    namespace,
    config: cfg.config,
    mesh: cfg.mesh,
  };
  if (o.namespaceInfo !== null) input.namespaceInfo = o.namespaceInfo ?? ns(namespace);
  return decide(input);
}

const annotation = (v: string | undefined): Record<string, string> => (v === undefined ? {} : { [INJECT]: v });

t.test('spec table: namespace selection comes before everything on the pod', async (t) => {
  const rows: Array<[selected: boolean, policy: 'enabled' | 'disabled', annot: string | undefined, injected: boolean]> =
    [
      [true, 'enabled', undefined, true],
      [true, 'enabled', 'false', false],
      [true, 'disabled', 'true', true],
      [true, 'disabled', undefined, false],
      [false, 'enabled', 'true', false],
      [false, 'enabled', undefined, false],
      [false, 'disabled', 'true', false],
      [false, 'disabled', undefined, false],
    ];
  for (const [selected, policy, annot, injected] of rows) {
    const cfg = config({ policy, namespaceSelector: { matchLabels: { mesh: 'on' } } });
    const d = run(cfg, {
      annotations: annotation(annot),
      namespaceInfo: ns('apps', selected ? { mesh: 'on' } : { mesh: 'off' }),
    });
    const name = `ns ${selected ? '' : 'not '}selected, policy ${policy}, annotation ${annot ?? '-'}`;
    t.equal(d.inject, injected, name);
    if (!selected) {
      t.equal(d.reason, 'namespace-not-selected', `${name}: reason`);
      t.match(d.detail, /namespace apps does not match namespaceSelector \(mesh=on\)/);
      t.equal(d.intended, true, `${name}: intended`);
    }
  }
});

t.test('spec table: with the namespace selected, annotation > never > always > policy', async (t) => {
  // Pod labels: role=batch matches neverInjectSelector, tier=edge matches alwaysInjectSelector.
  const rows: Array<
    [
      annot: string | undefined,
      never: boolean,
      always: boolean,
      policy: 'enabled' | 'disabled',
      injected: boolean,
      reason: string,
    ]
  > = [
    ['true', true, true, 'disabled', true, 'annotation-true'],
    ['true', true, false, 'enabled', true, 'annotation-true'],
    ['false', false, true, 'enabled', false, 'annotation-false'],
    ['false', false, false, 'enabled', false, 'annotation-false'],
    [undefined, true, true, 'enabled', false, 'never-inject-selector'],
    [undefined, true, false, 'enabled', false, 'never-inject-selector'],
    [undefined, false, true, 'disabled', true, 'always-inject-selector'],
    [undefined, false, true, 'enabled', true, 'always-inject-selector'],
    [undefined, false, false, 'enabled', true, 'policy-enabled'],
    [undefined, false, false, 'disabled', false, 'policy-disabled'],
  ];
  const cfgFor = (policy: string) =>
    config({
      policy,
      namespaceSelector: { matchExpressions: [{ key: 'mesh', operator: 'Exists' }] },
      neverInjectSelector: [{ matchLabels: { role: 'batch' } }],
      alwaysInjectSelector: [{ matchExpressions: [{ key: 'tier', operator: 'In', values: ['edge', 'api'] }] }],
    });
  for (const [annot, never, always, policy, injected, reason] of rows) {
    const labels = { ...(never ? { role: 'batch' } : {}), ...(always ? { tier: 'edge' } : {}) };
    const d = run(cfgFor(policy), { labels, annotations: annotation(annot), namespaceInfo: ns('apps', { mesh: '' }) });
    const name = `annotation ${annot ?? '-'}, never ${never}, always ${always}, policy ${policy}`;
    t.equal(d.inject, injected, name);
    t.equal(d.reason, reason, `${name}: reason`);
    t.equal(d.intended, true, `${name}: intended`);
    t.same(d.warnings, [], `${name}: no warnings`);
  }
  const d = run(cfgFor('enabled'), { labels: { role: 'batch' }, namespaceInfo: ns('apps', { mesh: '' }) });
  t.equal(d.detail, 'pod labels match neverInjectSelector[0] (role=batch)');
});

t.test('no namespaceSelector selects every namespace, known or not', async (t) => {
  const d = run(config(), { namespace: 'anything', namespaceInfo: null });
  t.equal(d.inject, true);
  t.equal(d.reason, 'policy-enabled');
  t.same(d.warnings, []);
});

t.test('namespaceSelector sees the automatic kubernetes.io/metadata.name label', async (t) => {
  const cfg = config({
    namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['shop'] }] },
  });
  t.equal(run(cfg, { namespace: 'shop', namespaceInfo: null }).inject, true, 'unknown namespace selected by name');
  t.equal(
    run(cfg, { namespace: 'shop', namespaceInfo: ns('shop', { 'kubernetes.io/metadata.name': 'spoofed' }) }).inject,
    true,
    'the real name wins over a stale label',
  );
  t.equal(run(cfg, { namespace: 'other' }).inject, false);
});

t.test('an unknown namespace that the selector rejects is flagged, not intended', async (t) => {
  const cfg = config({ namespaceSelector: { matchLabels: { mesh: 'on' } } });
  const d = run(cfg, { namespace: 'ghost', namespaceInfo: null });
  t.equal(d.inject, false);
  t.equal(d.reason, 'namespace-not-selected');
  t.equal(d.intended, false);
  t.equal(d.unknownNamespace, 'ghost', 'the run reports the unknown namespace once (pipeline)');
  t.same(d.warnings, [], 'no per-workload copy of that warning');
});

t.test('the label sidecar.istio.io/inject wins over the annotation', async (t) => {
  const cfg = config({ policy: 'disabled' });
  const cases: Array<[label: string, annot: string, injected: boolean, reason: string]> = [
    ['false', 'true', false, 'label-false'],
    ['true', 'false', true, 'label-true'],
    ['', 'true', false, 'policy-disabled'], // an empty label still shadows the annotation: unset → policy
  ];
  for (const [label, annot, injected, reason] of cases) {
    const d = run(cfg, { labels: { [INJECT]: label }, annotations: { [INJECT]: annot } });
    t.equal(d.inject, injected, `label "${label}" + annotation "${annot}"`);
    t.equal(d.reason, reason, `label "${label}" + annotation "${annot}": reason`);
  }
  const d = run(cfg, { labels: { [INJECT]: 'false' }, annotations: { [INJECT]: 'true' } });
  t.equal(
    d.detail,
    'pod label sidecar.istio.io/inject is "false" (the label takes precedence over the annotation "true")',
  );
});

t.test('inject values: Istio 1.13-1.26 semantics by default', async (t) => {
  // Policy disabled, so a value read as "unset" would show up as policy-disabled.
  const cfg = config({ policy: 'disabled' });
  const cases: Array<[value: string, injected: boolean, reason: string, warns: boolean]> = [
    ['true', true, 'label-true', false],
    ['false', false, 'label-false', false],
    ['y', true, 'label-true', true],
    ['yes', true, 'label-true', true],
    ['on', true, 'label-true', true],
    ['True', true, 'label-true', true],
    ['YES', true, 'label-true', true],
    ['False', false, 'label-false', true],
    ['random', false, 'label-false', true],
    ['', false, 'policy-disabled', false],
  ];
  for (const [value, injected, reason, warns] of cases) {
    const d = run(cfg, { labels: { [INJECT]: value } });
    t.equal(d.inject, injected, `"${value}"`);
    t.equal(d.reason, reason, `"${value}": reason`);
    t.equal(d.warnings.length, warns ? 1 : 0, `"${value}": warning count`);
    if (warns)
      t.match(d.warnings[0], new RegExp(`pod label sidecar\\.istio\\.io/inject is "${value}".*Istio >= 1\\.27 treats`));
  }
  const random = run(config({ policy: 'enabled' }), { annotations: { [INJECT]: 'random' } });
  t.equal(random.inject, false, 'a random annotation opts out even with policy enabled');
  t.equal(random.reason, 'annotation-false');
  t.match(random.warnings[0], /pod annotation sidecar\.istio\.io\/inject is "random": read as "false"/);
});

t.test('inject values: strictInjectValues follows Istio >= 1.27 (only exact true/false count)', async (t) => {
  for (const policy of ['enabled', 'disabled'] as const) {
    const cfg = config({ policy, istio: { strictInjectValues: true } });
    for (const value of ['y', 'yes', 'on', 'True', 'random', 'FALSE']) {
      const d = run(cfg, { labels: { [INJECT]: value } });
      t.equal(d.inject, policy === 'enabled', `"${value}" with policy ${policy} falls back to the policy`);
      t.equal(d.reason, `policy-${policy}`);
      t.equal(d.warnings.length, 1);
      t.match(d.warnings[0], new RegExp(`"${value}", which Istio >= 1\\.27 treats as unset`));
    }
    t.equal(run(cfg, { labels: { [INJECT]: 'true' } }).inject, true);
    t.equal(run(cfg, { labels: { [INJECT]: 'false' } }).inject, false);
  }
  const cfg = config({ istio: { strictInjectValues: true }, neverInjectSelector: [{ matchLabels: { app: 'db' } }] });
  const d = run(cfg, { labels: { app: 'db', [INJECT]: 'yes' } });
  t.equal(d.reason, 'never-inject-selector', 'an unset value lets the selectors decide');
});

t.test('selectors: never beats always, empty selectors are ignored, first match is named', async (t) => {
  const cfg = config({
    neverInjectSelector: [{}, { matchExpressions: [{ key: 'legacy', operator: 'Exists' }] }],
    alwaysInjectSelector: [{}, { matchLabels: { app: 'web' } }],
    policy: 'disabled',
  });
  t.equal(run(cfg, { labels: { app: 'api' } }).reason, 'policy-disabled', 'empty selectors match nothing here');
  const both = run(cfg, { labels: { app: 'web', legacy: '' } });
  t.equal(both.inject, false);
  t.equal(both.detail, 'pod labels match neverInjectSelector[1] (legacy)');
  const always = run(cfg, { labels: { app: 'web' } });
  t.equal(always.inject, true);
  t.equal(always.detail, 'pod labels match alwaysInjectSelector[1] (app=web)');
  const notIn = config({
    neverInjectSelector: [{ matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['prod'] }] }],
  });
  t.equal(run(notIn, { labels: {} }).inject, false, 'NotIn matches a missing key');
  t.equal(run(notIn, { labels: { env: 'prod' } }).inject, true);
});

t.test('ignored namespaces skip injection whatever the pod says', async (t) => {
  const d = run(config(), { namespace: 'kube-system', annotations: { [INJECT]: 'true' } });
  t.same([d.inject, d.reason, d.intended], [false, 'ignored-namespace', true]);
  t.equal(d.detail, 'namespace kube-system is in ignoredNamespaces');
  for (const n of ['kube-public', 'kube-node-lease', 'local-path-storage'])
    t.equal(run(config(), { namespace: n }).inject, false, n);
  const custom = config({ ignoredNamespaces: ['batch'] });
  t.equal(run(custom, { namespace: 'kube-system' }).inject, true, 'a given list replaces the default');
  t.equal(run(custom, { namespace: 'batch' }).reason, 'ignored-namespace');
  const beforeSelector = config({ namespaceSelector: { matchLabels: { mesh: 'on' } } });
  t.equal(
    run(beforeSelector, { namespace: 'kube-system' }).reason,
    'ignored-namespace',
    'checked before the namespace selector',
  );
});

t.test('hostNetwork pods are never injected and that is flagged', async (t) => {
  const d = run(config({ alwaysInjectSelector: [{ matchLabels: { app: 'x' } }] }), {
    hostNetwork: true,
    labels: { app: 'x', [INJECT]: 'true' },
    namespace: 'kube-system',
  });
  t.same([d.inject, d.reason, d.intended], [false, 'host-network', false]);
  t.match(d.detail, /host network/, 'wording the conformance case hello-host-network-with-ns expects');
});

t.test(
  "a driver's traits: the fallback taken in place of the policy or with it, shared defaults as data, defaults in one place",
  async (t) => {
    const { bindDriver, sharedDefaultsOf, traitsOf, TRAIT_DEFAULTS } = await import('../../src/contract/driver.ts');
    type Traits = import('../../src/contract/driver.ts').DriverTraits<{ on: boolean }>;
    // A minimal driver: its namespace annotation `example.dev/mesh` is its fallback.
    const driver = (traits?: Traits) => ({
      name: 'example',
      reasons: ['namespace-on', 'namespace-off'],
      ...(traits ? { traits } : {}),
      loadConfig: () => ({ settings: { on: true }, issues: [], warnings: [] }),
      decide: (input: { namespaceInfo?: NamespaceInfo }) => {
        const v = input.namespaceInfo?.annotations['example.dev/mesh'];
        return {
          ...(v
            ? { fallback: { inject: v === 'on', reason: `namespace-${v}`, detail: `namespace annotation is ${v}` } }
            : {}),
          warnings: [],
          trace: [],
        };
      },
      inject: () => {
        throw new Error('not used');
      },
      inventory: () => undefined,
    });
    const decideWith = (
      traits: Traits | undefined,
      spec: Record<string, unknown>,
      annotation: string | undefined,
      labels: Record<string, string> = {},
    ) => {
      const cfg = config(spec);
      return decide({
        podMeta: { labels, annotations: {} },
        podSpec: {},
        namespace: 'apps',
        namespaceInfo: { name: 'apps', labels: {}, annotations: annotation ? { 'example.dev/mesh': annotation } : {} },
        config: cfg.config,
        mesh: bindDriver(driver(traits), { on: true }),
      });
    };
    t.match(
      decideWith(undefined, { policy: 'enabled' }, 'off'),
      { inject: false, reason: 'namespace-off', detail: /namespace annotation is off$/ },
      'default trait: the fallback decides in place of the policy',
    );
    t.match(decideWith(undefined, { policy: 'disabled' }, 'on'), { inject: true, reason: 'namespace-on' });
    t.match(
      decideWith(undefined, { neverInjectSelector: [{ matchLabels: { app: 'x' } }] }, 'on', { app: 'x' }),
      { inject: false, reason: 'never-inject-selector' },
      'below the shared selectors',
    );
    const withPolicy: Traits = { fallback: 'with-policy' };
    t.match(
      decideWith(withPolicy, { policy: 'enabled' }, 'on'),
      {
        inject: true,
        reason: 'namespace-on',
        detail: /^namespace annotation is on; nothing on the pod decides; policy is enabled$/,
      },
      'with-policy: an enabled policy takes the reason',
    );
    t.match(
      decideWith(withPolicy, { policy: 'disabled' }, 'on'),
      { inject: false, reason: 'policy-disabled', detail: /policy is disabled; namespace annotation is on$/ },
      'and a disabled policy still decides, naming it',
    );
    t.match(decideWith(withPolicy, { alwaysInjectSelector: [{ matchLabels: { app: 'x' } }] }, 'on', { app: 'x' }), {
      reason: 'always-inject-selector',
      detail: /; namespace annotation is on$/,
    });
    t.match(
      decideWith(undefined, { policy: 'enabled' }, undefined),
      { inject: true, reason: 'policy-enabled' },
      'no fallback: the policy',
    );

    const defaults = traitsOf({ name: 'example' });
    t.equal(defaults.hostNetwork, 'skip');
    t.equal(defaults.fallback, 'instead-of-policy');
    t.equal(defaults.podMetadataPath({ kind: 'CronJob' } as never), undefined, "the pod template's own metadata");
    t.equal(
      defaults.otherReadingNote('spec.x', true, 'why'),
      'the example driver reads spec.x instead and would inject it: why',
    );
    t.same(TRAIT_DEFAULTS.sharedDefaults, {});
    t.same(
      sharedDefaultsOf(driver({ sharedDefaults: { policy: 'disabled' } }), { on: true }),
      { policy: 'disabled' },
      'shared defaults as data',
    );
    t.same(
      sharedDefaultsOf(driver({ sharedDefaults: (s) => ({ nativeSidecars: s.on }) }), { on: true }),
      { nativeSidecars: true },
      'or read from the settings',
    );
    t.same(sharedDefaultsOf(driver(), { on: true }), {}, 'none: the core defaults');
  },
);
