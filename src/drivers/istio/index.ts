/**
 * The Istio driver: decides with Istio's own rules (`./decide.ts`, webhook routing in `./webhook.ts`, reason
 * codes in `./reasons.ts`), injects Istio's sidecar into pod templates the way `istioctl kube-inject` does
 * (templates rendered by `./render.ts`, Go post-processing ported in `./inject.ts` and its modules, probes
 * `./probes.ts`), and reads back what it injected from the
 * `sidecar.istio.io/status` annotation (not taken on trust: `untrustedStatusItem`, and for names beyond the
 * built-in templates the configuration's own injection of the pod, `proveStatusItems`), and undoes it for uninject
 * (`./uninject.ts`). Config section `spec.istio` (`./config.ts`, `./config.schema.json`).
 */
import type { JsonObject } from '../../model.ts';
import { defineDriver, type MeshDriver } from '../../contract/driver.ts';
import { jobTemplateTraits } from '../kit/cronjob.ts';
import { istioSharedDefaults, loadIstioConfig, type IstioSettings } from './config.ts';
import { withInjectorConfigMap } from './configmap-source.ts';
import { decideIstio } from './decide.ts';
import { ISTIO_REASON_INFO, ISTIO_REASONS } from './reasons.ts';
import { injectIstioPod, injectionSummary } from './inject.ts';
import { parseInjectionStatus, STATUS_ANNOTATION } from './status.ts';
import { recordedIstioKey, uninjectIstio } from './uninject.ts';
import { istioNativeSidecarsAuto } from './native-auto.ts';
import { ISTIO_FLAGS } from './flags.ts';
import { REV_LABEL } from './webhook.ts';
import { planIstioMigration } from './migrate.ts';
import { dataplaneOf } from './ambient.ts';
import { AMBIENT_FINDINGS, AMBIENT_PACKAGE_KINDS, ambientFindings } from './ambient-checks.ts';

export type { IstioSettings } from './config.ts';
export { ISTIO_REASON_INFO, ISTIO_REASONS } from './reasons.ts';

/**
 * The settings of revision `revision` (`default` for `''`) under `spec.istio.revisions`, or `settings` itself when
 * there is no such revision (one revision served).
 */
export function revisionSettings(settings: IstioSettings, revision: string | undefined): IstioSettings {
  if (revision === undefined || !settings.served) return settings;
  return settings.served.find((r) => (r.revision === '' ? 'default' : r.revision) === revision)?.settings ?? settings;
}

/** `fromInput`: each served revision's injector ConfigMap (`istio-sidecar-injector[-<revision>]`) in the input, with the notes of all. */
function withInjectorConfigMaps(
  settings: IstioSettings,
  configMaps: (names: readonly string[]) => readonly JsonObject[],
): { settings: IstioSettings; notes: string[] } {
  const top = withInjectorConfigMap(settings, configMaps);
  if (!settings.served) return top;
  const notes = [...top.notes];
  const served = settings.served.map((r) => {
    const done = withInjectorConfigMap(r.settings, configMaps);
    notes.push(...done.notes.filter((n) => !notes.includes(n)));
    return { ...r, settings: done.settings };
  });
  return { settings: { ...top.settings, served }, notes };
}

/** The `istio` mesh driver. `inject` throws `InjectError` for invalid annotations and template failures. */
export const istioDriver: MeshDriver<IstioSettings> = defineDriver<IstioSettings>({
  name: 'istio',
  reasons: ISTIO_REASONS,
  reasonInfo: ISTIO_REASON_INFO,
  traits: {
    // istioctl kube-inject reads a CronJob's spec.jobTemplate.metadata (`IntoObject`, pkg/kube/inject/inject.go).
    ...jobTemplateTraits('istioctl kube-inject'),
    fallback: 'with-policy', // the webhook that selected the pod (`selection: webhook`, ./decide.ts)
    sharedDefaults: istioSharedDefaults, // policy and selectors from the values
    // The injector's templates, and the values they render (the proxy image, `sidecarInjectorWebhook.templates`).
    platformFields: ['injectorConfig', 'values'],
  },
  flags: ISTIO_FLAGS,
  help: {
    config: [
      'istio:',
      '  revision: ""                    # control-plane revision ("" = default)',
      '  selection: kube-inject          # kube-inject | webhook (MutatingWebhookConfiguration routing)',
      '  revisions: {stable: {...}}      # webhook: several revisions, each its own values, meshConfig, version',
      '  revisionTags: {prod: stable}    # tag -> revision (a list: tags of this revision)',
      '  ambient: coexist                # coexist | prefer (skip pods istio.io/dataplane-mode enrols in ambient)',
      "  values: {...}                   # istiod chart values (or the istio-sidecar-injector 'values' JSON)",
      "  meshConfig: {...}               # mesh config (or the istio ConfigMap 'mesh' YAML)",
    ].join('\n'),
    optIn: 'Istio sidecar.istio.io/inject',
    flags: '--revision, the istioctl file flags',
    nativeSidecarsAuto: 'Istio >= 1.27: from Kubernetes 1.33',
  },
  loadConfig: loadIstioConfig,
  fromInput: withInjectorConfigMaps,
  decide: decideIstio,
  inject(req) {
    const settings = revisionSettings(req.settings, req.decisionTags?.revision);
    const { pod, warnings, sources } = injectIstioPod({ ...req, settings });
    const summary = injectionSummary(settings);
    return { pod, summary: sources ? `${summary}; ${sources}` : summary, warnings };
  },
  // The status is not taken on trust (issue #8), but what it lists beyond the built-in templates' names (a user
  // template's volume) only the configuration's own injection can prove: uninject does (./uninject.ts
  // `proveStatusItems`), and refuses a name that injection does not add: nothing is written without that proof.
  inventory(pod) {
    const raw = pod.metadata.annotations?.[STATUS_ANNOTATION];
    if (raw === undefined) return undefined;
    const status = parseInjectionStatus(raw);
    return {
      statusAnnotation: STATUS_ANNOTATION,
      containers: status?.containers ?? [],
      initContainers: status?.initContainers ?? [],
      volumes: status?.volumes ?? [],
      imagePullSecrets: status?.imagePullSecrets ?? [],
    };
  },
  // The revision that injected the pod (the `istio.io/rev` annotation Istio's injection writes) undoes it; the
  // injection the check passes (`ctx.injection`) is kept only when it was made with that revision's settings.
  uninject: (pod, inv, settings, ctx) => {
    const used = revisionSettings(settings, ctx.injected.metadata.annotations?.[REV_LABEL]);
    const { injection, ...rest } = ctx;
    const same = injection && revisionSettings(settings, injection.request.decisionTags?.revision) === used;
    return uninjectIstio(pod, inv, used, same ? ctx : rest);
  },
  recordKeys: recordedIstioKey,
  recordsProbePorts: true,
  nativeSidecarsAuto: istioNativeSidecarsAuto,
  // The data-plane mode of every workload as written (./ambient.ts, Istio cni/README.md).
  workloadTags: (view) => ({ dataplane: dataplaneOf(view.pod, view.podLabels, view.namespaceLabels) }),
  packageKinds: AMBIENT_PACKAGE_KINDS,
  packageFindings: (pkg) => ambientFindings(pkg),
  findingInfo: AMBIENT_FINDINGS,
  migration: { targets: ['ambient', 'sidecar'], plan: (req) => planIstioMigration(req) },
});
