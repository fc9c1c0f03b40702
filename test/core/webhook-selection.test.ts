import t from 'tap';
import { decide } from '../../src/selection/policy.ts';
import { buildIstioWebhooks } from '../../src/drivers/istio/webhook.ts';
import { loadSpec, type Loaded } from '../helpers/config.ts';

const INJECT = 'sidecar.istio.io/inject';
const REV = 'istio.io/rev';
const NS_INJ = 'istio-injection';

interface Istio {
  revision?: string;
  revisionTags?: string[];
  enableNamespacesByDefault?: boolean;
}

/** Config with webhook selection on (through the real loader). */
function webhookConfig(istio: Istio = {}, spec: Record<string, unknown> = {}): Loaded {
  return loadSpec({ ...spec, istio: { selection: 'webhook', ...istio } });
}

interface Case {
  ns?: Record<string, string> | null;
  pod?: Record<string, string>;
  annotations?: Record<string, string>;
  namespace?: string;
  hostNetwork?: boolean;
}

function run(cfg: Loaded, c: Case) {
  const namespace = c.namespace ?? 'apps';
  return decide({
    podMeta: { labels: c.pod ?? {}, annotations: c.annotations ?? {} },
    podSpec: c.hostNetwork === undefined ? {} : { hostNetwork: c.hostNetwork },
    namespace,
    ...(c.ns === null ? {} : { namespaceInfo: { name: namespace, labels: c.ns ?? {}, annotations: {} } }),
    config: cfg.config,
    mesh: cfg.mesh,
  });
}

t.test('every webhook of the chart table selects what it should', async (t) => {
  const rows: Array<[name: string, istio: Istio, c: Case, webhook: string, reason: string]> = [
    [
      'rev.namespace (default revision)',
      {},
      { ns: { [REV]: 'default' } },
      'istio-sidecar-injector/rev.namespace.sidecar-injector.istio.io',
      'webhook-namespace-label',
    ],
    [
      'rev.namespace (revision canary)',
      { revision: 'canary' },
      { ns: { [REV]: 'canary' } },
      'istio-sidecar-injector-canary/rev.namespace.sidecar-injector.istio.io',
      'webhook-namespace-label',
    ],
    [
      'rev.object (revision canary)',
      { revision: 'canary' },
      { pod: { [REV]: 'canary' } },
      'istio-sidecar-injector-canary/rev.object.sidecar-injector.istio.io',
      'webhook-object-label',
    ],
    [
      'rev.object (default revision)',
      {},
      { pod: { [REV]: 'default' } },
      'istio-sidecar-injector/rev.object.sidecar-injector.istio.io',
      'webhook-object-label',
    ],
    [
      'namespace.',
      {},
      { ns: { [NS_INJ]: 'enabled' } },
      'istio-sidecar-injector/namespace.sidecar-injector.istio.io',
      'webhook-namespace-label',
    ],
    [
      'object.',
      {},
      { pod: { [INJECT]: 'true' } },
      'istio-sidecar-injector/object.sidecar-injector.istio.io',
      'label-true',
    ],
    [
      'auto.',
      { enableNamespacesByDefault: true },
      {},
      'istio-sidecar-injector/auto.sidecar-injector.istio.io',
      'webhook-namespace-default',
    ],
  ];
  for (const [name, istio, c, webhook, reason] of rows) {
    const d = run(webhookConfig(istio), c);
    t.equal(d.inject, true, `${name}: injected`);
    t.equal(d.reason, reason, `${name}: reason`);
    t.ok(d.detail.includes(`webhook ${webhook}`), `${name}: detail names ${webhook} (${d.detail})`);
  }
});

t.test('nothing routed means not injected, with the cause named', async (t) => {
  const rows: Array<[name: string, istio: Istio, c: Case, cause: RegExp]> = [
    [
      'no labels anywhere',
      {},
      {},
      /namespace apps has no istio-injection or istio\.io\/rev label and the pod has no sidecar\.istio\.io\/inject=true or istio\.io\/rev label \(enableNamespacesByDefault is off\)/,
    ],
    [
      'istio-injection=disabled',
      {},
      { ns: { [NS_INJ]: 'disabled', [REV]: 'default' }, pod: { [INJECT]: 'true', [REV]: 'default' } },
      /istio-injection=disabled; only "enabled" selects a webhook/,
    ],
    [
      'foreign namespace revision',
      { revision: 'canary' },
      { ns: { [REV]: 'stable' } },
      /namespace apps has label istio\.io\/rev=stable, which is not revision "canary"/,
    ],
    [
      'foreign pod revision',
      { revision: 'canary', revisionTags: ['prod'] },
      { pod: { [REV]: 'stable' } },
      /pod label istio\.io\/rev=stable is not revision "canary" or its tags "prod"/,
    ],
    [
      'istio-injection=enabled for a non-default revision',
      { revision: 'canary' },
      { ns: { [NS_INJ]: 'enabled' } },
      /selects the default revision, but the control plane is revision "canary" and no revision tag is "default"/,
    ],
    [
      'object label for a non-default revision',
      { revision: 'canary' },
      { pod: { [INJECT]: 'true' } },
      /pod label sidecar\.istio\.io\/inject=true selects the default revision/,
    ],
    [
      'object label other than "true"',
      {},
      { pod: { [INJECT]: 'yes' } },
      /pod label sidecar\.istio\.io\/inject is "yes"; the object webhook matches only "true"/,
    ],
    [
      'auto excludes system namespaces',
      { enableNamespacesByDefault: true },
      { namespace: 'kube-system' },
      /namespace kube-system is excluded by the auto webhook/,
    ],
  ];
  for (const [name, istio, c, cause] of rows) {
    // kube-system is not in ignoredNamespaces here, so the webhook decides.
    const d = run(webhookConfig(istio, { ignoredNamespaces: [] }), c);
    t.equal(d.inject, false, `${name}: not injected`);
    t.equal(d.reason, 'webhook-not-selected', `${name}: reason`);
    t.equal(d.intended, true, `${name}: intended (the namespace is known)`);
    t.match(d.detail, cause, `${name}: cause`);
  }
});

t.test('precedence: istio-injection=enabled beats istio.io/rev on the namespace', async (t) => {
  const ns = { [NS_INJ]: 'enabled', [REV]: 'canary' };
  const asDefault = run(webhookConfig(), { ns });
  t.equal(asDefault.inject, true, 'the default revision injects');
  t.match(
    asDefault.detail,
    /^namespace label istio-injection=enabled selects webhook istio-sidecar-injector\/namespace\.sidecar-injector\.istio\.io; no sidecar\.istio\.io\/inject label or annotation decides; policy is enabled$/,
  );
  const asCanary = run(webhookConfig({ revision: 'canary' }), { ns });
  t.equal(asCanary.inject, false, 'revision canary is not selected although istio.io/rev=canary');
  t.match(asCanary.detail, /istio-injection=enabled, which selects the default revision/);
});

t.test('precedence: istio-injection=disabled disables the namespace', async (t) => {
  for (const istio of [{}, { enableNamespacesByDefault: true }, { revision: 'canary', revisionTags: ['default'] }]) {
    const d = run(webhookConfig(istio), { ns: { [NS_INJ]: 'disabled' }, pod: { [INJECT]: 'true' } });
    t.equal(d.reason, 'webhook-not-selected', JSON.stringify(istio));
  }
});

t.test('precedence: the namespace istio.io/rev beats the pod istio.io/rev', async (t) => {
  const cfg = webhookConfig({ revision: 'canary' });
  t.equal(run(cfg, { ns: { [REV]: 'stable' }, pod: { [REV]: 'canary' } }).inject, false, 'namespace points elsewhere');
  const d = run(cfg, { ns: { [REV]: 'canary' }, pod: { [REV]: 'stable' } });
  t.equal(d.inject, true, 'namespace points here');
  t.match(d.detail, /rev\.namespace\.sidecar-injector/);
});

t.test('precedence: the pod label sidecar.istio.io/inject=false always opts out', async (t) => {
  const setups: Array<[Istio, Record<string, string>]> = [
    [{}, { [NS_INJ]: 'enabled' }],
    [{}, { [REV]: 'default' }],
    [{ enableNamespacesByDefault: true }, {}],
    [{ revision: 'canary' }, { [REV]: 'canary' }],
  ];
  for (const [istio, ns] of setups) {
    const d = run(webhookConfig(istio), { ns, pod: { [INJECT]: 'false', [REV]: istio.revision ?? 'default' } });
    t.equal(d.reason, 'webhook-not-selected', JSON.stringify(ns));
    t.match(d.detail, /pod label sidecar\.istio\.io\/inject is "false", which every injection webhook excludes/);
  }
});

t.test('annotations are invisible to the webhook selectors but count inside injectRequired', async (t) => {
  const cfg = webhookConfig();
  const notRouted = run(cfg, { annotations: { [INJECT]: 'true' } });
  t.equal(notRouted.reason, 'webhook-not-selected', 'an annotation does not route a pod');
  const optOut = run(cfg, { ns: { [NS_INJ]: 'enabled' }, annotations: { [INJECT]: 'false' } });
  t.same([optOut.inject, optOut.reason], [false, 'annotation-false'], 'routed, then the annotation opts out');
  t.match(
    optOut.detail,
    /^pod annotation sidecar\.istio\.io\/inject is "false"; namespace label istio-injection=enabled selects webhook /,
  );
});

t.test(
  'after routing, injectRequired still applies hostNetwork, ignored namespaces, selectors and policy',
  async (t) => {
    const ns = { [NS_INJ]: 'enabled' };
    t.equal(run(webhookConfig(), { ns, hostNetwork: true }).reason, 'host-network');
    t.equal(run(webhookConfig(), { ns, namespace: 'kube-system' }).reason, 'ignored-namespace');
    const disabled = run(webhookConfig({}, { policy: 'disabled' }), { ns });
    t.same([disabled.inject, disabled.reason], [false, 'policy-disabled']);
    const never = run(webhookConfig({}, { neverInjectSelector: [{ matchLabels: { app: 'db' } }] }), {
      ns,
      pod: { app: 'db' },
    });
    t.same([never.inject, never.reason], [false, 'never-inject-selector']);
    const always = run(
      webhookConfig(
        { revision: 'canary' },
        { policy: 'disabled', alwaysInjectSelector: [{ matchLabels: { app: 'web' } }] },
      ),
      { pod: { app: 'web', [REV]: 'canary' } },
    );
    t.same([always.inject, always.reason], [true, 'always-inject-selector']);
  },
);

t.test('revision tags route to the revision; a "default" tag adds the default webhooks', async (t) => {
  const tagged = webhookConfig({ revision: 'canary', revisionTags: ['prod'] });
  const viaTag = run(tagged, { ns: { [REV]: 'prod' } });
  t.equal(viaTag.inject, true);
  t.match(
    viaTag.detail,
    /istio\.io\/rev=prod \(revision tag of canary\) selects webhook istio-revision-tag-prod\/rev\.namespace/,
  );
  t.equal(run(tagged, { pod: { [REV]: 'prod' } }).reason, 'webhook-object-label');
  const defaultTag = webhookConfig({ revision: 'canary', revisionTags: ['default'] });
  t.equal(
    run(defaultTag, { ns: { [NS_INJ]: 'enabled' } }).inject,
    true,
    'istio-injection=enabled reaches canary through the default tag',
  );
  t.match(
    run(defaultTag, { pod: { [INJECT]: 'true' } }).detail,
    /istio-revision-tag-default\/object\.sidecar-injector/,
  );
});

t.test('the webhook set per configuration', async (t) => {
  const names = (istio: Istio) =>
    buildIstioWebhooks({ revision: '', revisionTags: [], enableNamespacesByDefault: false, ...istio }).map(
      (w) => w.name.split('/')[1],
    );
  t.same(names({}), [
    'rev.namespace.sidecar-injector.istio.io',
    'rev.object.sidecar-injector.istio.io',
    'namespace.sidecar-injector.istio.io',
    'object.sidecar-injector.istio.io',
  ]);
  t.equal(names({ enableNamespacesByDefault: true }).length, 5);
  t.same(
    names({ revision: 'canary', enableNamespacesByDefault: true }),
    ['rev.namespace.sidecar-injector.istio.io', 'rev.object.sidecar-injector.istio.io'],
    'a non-default revision has no namespace./object./auto. webhooks',
  );
});

t.test('an unknown namespace in webhook mode is flagged', async (t) => {
  const d = run(webhookConfig(), { ns: null });
  t.same([d.inject, d.reason, d.intended], [false, 'webhook-not-selected', false]);
  t.equal(d.unknownNamespace, 'apps', 'the run reports the unknown namespace once (pipeline)');
  const byPod = run(webhookConfig(), { ns: null, pod: { [INJECT]: 'true' } });
  t.equal(byPod.inject, true, 'the object webhook needs no namespace labels');
});

t.test('kube-inject selection ignores namespace labels', async (t) => {
  const r = loadSpec();
  const d = run(r, { ns: { [NS_INJ]: 'disabled' } });
  t.same([d.inject, d.reason], [true, 'policy-enabled']);
});
