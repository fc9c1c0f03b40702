/**
 * The inject-time check reuses the injection it checks (issue #37, the check's cost): Istio's uninject injects
 * the uninjected pod again to learn which labels and annotations the injection writes; in the check, that pod is
 * the one just injected, and the hook takes the injection's result (`UninjectContext.injection`) instead of
 * rendering it again, only when its request is the same one (the same pod template as JSON, config, workload,
 * namespace and revision settings). Under plan verification (the test suite's preload) a reuse is rendered too
 * and must be equal. What the hook gives back is the same either way; a doctored injection shows which one was
 * taken: the hook keeps a label whose value the re-injection does not write again.
 */
import t from 'tap';
import { WEB_WORKLOAD } from '../../helpers/fixtures.ts';
import { istioDriver } from '../../../src/drivers/istio/index.ts';
import { bindDriver, type WorkloadRef } from '../../../src/contract/driver.ts';
import { uninjectPod } from '../../../src/patch/uninject.ts';
import { ISTIO_CHART_VALUES, ISTIO_MESH_DEFAULTS, mergeValues } from '../../../src/drivers/istio/defaults.ts';
import { builtinOnlyTemplates } from '../../../src/drivers/istio/template-sources.ts';
import type { IstioSettings } from '../../../src/drivers/istio/config.ts';
import type { Config, PodTemplate } from '../../../src/model.ts';
import { createRenderRun, withRenderRun } from '../../../src/render/run-state.ts';

const CANONICAL = 'service.istio.io/canonical-name';

const config: Config = {
  mesh: 'istio',
  policy: 'enabled',
  namespaces: [],
  defaultNamespace: 'default',
  ignoredNamespaces: [],
  neverInjectSelector: [],
  alwaysInjectSelector: [],
  nativeSidecars: false,
  resultAnnotations: false,
  workloadKinds: [],
};
const settings: IstioSettings = {
  values: mergeValues(ISTIO_CHART_VALUES, { global: { hub: 'registry.istio.io/testing', tag: 'latest' } }),
  meshConfig: mergeValues(ISTIO_MESH_DEFAULTS, {}),
  revision: '',
  revisionTags: [],
  selection: 'kube-inject',
  strictInjectValues: true,
  platform: '',
  compliancePolicy: '',
  enableNamespacesByDefault: false,
  templates: builtinOnlyTemplates(),
  env: {},
  sourceInputs: { userValues: {}, hasInjectorConfig: false, version: '' },
};
const workload: WorkloadRef = WEB_WORKLOAD;
const app = (): PodTemplate => ({
  metadata: { labels: { app: 'web' } },
  spec: { containers: [{ name: 'web', image: 'web:1', ports: [{ containerPort: 8080 }] }] },
});

const mesh = bindDriver(istioDriver, settings);
const injected = mesh.inject({ pod: app(), workload, config }).pod;
/** The injection with the canonical-name label's value changed: what no render of `app()` gives. */
const doctored: PodTemplate = structuredClone(injected);
doctored.metadata.labels = { ...doctored.metadata.labels, [CANONICAL]: 'doctored' };

/** `f` in a run of its own with plan verification on or off (outside a run, nothing is verified). */
const inRun =
  (verify: boolean) =>
  <T>(f: () => T): T =>
    withRenderRun(createRenderRun({ plans: { verify } }), f);
const verified = inRun(true);
const unverified = inRun(false);

const uninject =
  (injection: { request: { pod: PodTemplate; workload: WorkloadRef; config: Config } } | undefined) =>
  (made: PodTemplate) =>
    uninjectPod(mesh, injected, {
      workload,
      config,
      ...(injection ? { injection: { ...injection, pod: made } } : {}),
    })?.pod;

t.test('the injection reused gives what a render gives', async (t) => {
  t.equal(injected.metadata.labels?.[CANONICAL], 'web', 'the injection writes the canonical-name label');
  const rendered = uninject(undefined)(injected);
  t.same(rendered, app(), 'without the injection: uninject gives back the pod template');
  const request = { pod: app(), workload, config };
  t.same(
    verified(() => uninject({ request })(injected)),
    rendered,
    'with it (verified by a render): the same',
  );
  t.same(
    unverified(() => uninject({ request })(injected)),
    rendered,
    'with it, unverified: the same',
  );
});

t.test('the hook takes the injection only for the same request', async (t) => {
  const request = { pod: app(), workload, config };
  const reused = unverified(() => uninject({ request })(doctored));
  t.equal(
    reused?.metadata.labels?.[CANONICAL],
    'web',
    'same request: taken (the label the doctored injection does not write again stays)',
  );
  const others: Array<[string, { pod: PodTemplate; workload: WorkloadRef; config: Config }]> = [
    ['another pod template', { ...request, pod: { ...app(), metadata: { labels: { app: 'other' } } } }],
    ['another config object', { ...request, config: { ...config } }],
    ['another workload object', { ...request, workload: { ...workload } }],
  ];
  for (const [what, other] of others) {
    const got = unverified(() => uninject({ request: other })(doctored));
    t.same(got, app(), `${what}: rendered (the label comes off as injection writes it)`);
  }
});

t.test('under plan verification a reuse that a render does not give is an internal error', async (t) => {
  t.throws(
    () => verified(() => uninject({ request: { pod: app(), workload, config } })(doctored)),
    /reused an injection that a render does not give \(web\)/,
  );
});
