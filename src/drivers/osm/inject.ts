/**
 * Injection for the OSM family, in the order of OSM's `createPatch` (pkg/injector/patch.go) and the
 * osm-edge/FSM sidecar drivers' `Patch` (providers/{envoy,pipy}/driver/sidecar.go): probe rewrite,
 * Prometheus annotations, the proxy UUID label, the bootstrap volume, the iptables init container (Linux,
 * iptables interception), the healthcheck container (TCP probes), the sidecar. A previous injection recorded
 * in the status annotation is removed first, so that a second run gives the same bytes.
 */
import { cloneJson, isJsonObject } from '../../json.ts';
import { quoteData } from '../../results/quote.ts';
import type { JsonObject, PodTemplate } from '../../model.ts';
import { InjectError } from '../../results/errors.ts';
import type { InjectRequest, InjectResponse, WorkloadRef } from '../../contract/driver.ts';
import type { OsmSettings } from './config.ts';
import { bootstrapVolume, healthcheckContainer, initContainer, sidecarContainer } from './containers.ts';
import { readSwitch } from './decide.ts';
import { iptablesScript, trafficLists } from './exclusions.ts';
import { keys, PORTS } from './flavor.ts';
import { proxyUuid, serviceAccountOf } from './identity.ts';
import { rewriteProbes } from './probes.ts';
import { refuseTakenNames } from '../kit/taken-names.ts';
import { readStatus, removeInjection, statusValue, type StatusRecord } from './status.ts';

function list(spec: JsonObject, field: string): JsonObject[] {
  const v = spec[field];
  return Array.isArray(v) ? v.filter(isJsonObject) : [];
}

/** Short description for results: `osm, envoy` / `fsm, pipy, NodeLevel`. */
export function summaryOf(s: OsmSettings): string {
  const mode = s.interceptionMode === s.flavor.interceptionModes[0] ? '' : `, ${s.interceptionMode}`;
  return `${s.flavor.mesh}, ${s.sidecarClass.name}${mode}`;
}

/**
 * The pod's controller as osm-edge/FSM's pipy driver reads it from the pod's owner references at admission
 * (`POD_CONTROLLER_KIND`/`NAME`): the first controller reference, and a ReplicaSet `<x>-<suffix>` read as
 * Deployment `<x>`. Offline the owner is known from the workload kind.
 * @throws InjectError for kinds whose pods' owner name is chosen at run time (DeploymentConfig) or unknown
 */
function podController(workload: WorkloadRef, pod: PodTemplate, title: string): { kind: string; name: string } {
  const replicaSet = (name: string) => {
    const dash = name.lastIndexOf('-');
    return dash >= 0 ? { kind: 'Deployment', name: name.slice(0, dash) } : { kind: 'ReplicaSet', name };
  };
  switch (workload.kind) {
    case 'Pod': {
      const owner = (pod.metadata.ownerReferences ?? []).find((r) => r.controller === true);
      if (!owner) return { kind: '', name: '' };
      const kind = typeof owner.kind === 'string' ? owner.kind : '';
      const name = typeof owner.name === 'string' ? owner.name : '';
      return kind === 'ReplicaSet' ? replicaSet(name) : { kind, name };
    }
    case 'Deployment':
    case 'Rollout':
      return { kind: 'Deployment', name: workload.name };
    case 'ReplicaSet':
      return replicaSet(workload.name);
    case 'StatefulSet':
    case 'DaemonSet':
    case 'Job':
    case 'ReplicationController':
      return { kind: workload.kind, name: workload.name };
    default:
      throw new InjectError(
        `${title}'s pipy sidecar gets its pod's controller (POD_CONTROLLER_KIND/NAME) from the pod's owner reference, which for a ${workload.kind} is not known before the pods exist; not injected`,
      );
  }
}

/** Where `key` is set first, the pod then the namespace (an empty value counts, as in FSM), or undefined. */
function annotationValue(
  key: string,
  pod: Record<string, string>,
  ns: Record<string, string>,
): { value: string; where: string } | undefined {
  const onPod = Object.hasOwn(pod, key) ? pod[key] : undefined;
  if (onPod !== undefined) return { value: onPod, where: 'pod' };
  const onNamespace = Object.hasOwn(ns, key) ? ns[key] : undefined;
  if (onNamespace !== undefined) return { value: onNamespace, where: 'namespace' };
  return undefined;
}

/** The sidecar's two lifecycle switches (hold the application until the proxy starts; graceful exit), pod over namespace over settings. */
function lifecycleSwitches(
  s: OsmSettings,
  podAnnotations: Record<string, string>,
  nsAnnotations: Record<string, string>,
  warnings: string[],
): { hold: boolean; gracefulExit: boolean } {
  const k = keys(s.flavor);
  return {
    hold: lifecycleSwitch(
      k.holdApplication,
      s.holdApplicationUntilProxyStarts,
      podAnnotations,
      nsAnnotations,
      warnings,
      s,
    ),
    gracefulExit: lifecycleSwitch(
      k.gracefulExit,
      s.gracefulExitUntilDownstreamEnds,
      podAnnotations,
      nsAnnotations,
      warnings,
      s,
    ),
  };
}

/**
 * Injects one pod template (driver `inject`; a CronJob's is `spec.jobTemplate.spec.template`, metadata
 * included: no `podMetadataPath` trait). Warnings: the identity the cluster must provide (always), a Job or CronJob
 * that will not complete (OSM), `nativeSidecars` (not supported by the meshes), a lifecycle annotation
 * FSM would read as false.
 * @throws InjectError for an invalid exclusion annotation, a named probe port that does not
 *   exist, a container/volume name already taken, an annotation this driver does not reproduce, a Windows
 *   pod without a Windows image, or a status annotation it cannot read
 */
export function injectOsmFamily(req: InjectRequest<OsmSettings>): InjectResponse {
  const s = req.settings;
  const f = s.flavor;
  const k = keys(f);
  const { workload } = req;
  const pod = cloneJson(req.pod);
  const warnings: string[] = [];

  const previous = readStatus(pod, k.status);
  if (previous) removeInjection(pod, previous, k.status);
  refuseTaken(pod, s, k.status);
  const podAnnotations = { ...(pod.metadata.annotations ?? {}) };
  const nsAnnotations = req.namespace?.annotations ?? {};
  refuseUnreproducedAnnotations(f, workload.namespace, podAnnotations, nsAnnotations);

  const uuid = proxyUuid(f.mesh, s.meshName, workload, proxyName(workload, pod));
  const rec: StatusRecord = {
    class: s.sidecarClass.name,
    uuid,
    initContainers: [],
    containers: [],
    volumes: [],
    labels: {},
    annotations: {},
    probes: [],
  };
  const setMeta = metadataSetter(pod, rec);
  if (s.interceptionMode === f.nodeLevelMode) {
    setMeta('labels', f.uuidLabel, uuid);
    setMeta('annotations', k.status, statusValue(rec));
    return { pod, summary: summaryOf(s), warnings };
  }

  const { windows, image } = sidecarImage(s, pod, podAnnotations, nsAnnotations);
  const containers = list(pod.spec, 'containers');
  pod.spec.containers = containers;
  const probes = rewriteProbes(containers, s.sidecarClass.probeStyle, f);
  rec.probes = probes.originals;
  addPrometheusAnnotations(nsAnnotations[k.metrics], k.metrics, workload.namespace, setMeta);
  setMeta('labels', f.uuidLabel, uuid);
  addBootstrapAndInit(pod, s, rec, uuid, windows, podAnnotations);
  if (probes.usesTcp) {
    containers.push(healthcheckContainer(s));
    rec.containers.push(f.healthcheckContainerName);
  }

  const sa = serviceAccountOf(pod.spec);
  const identity = `${sa}.${workload.namespace}`;
  const { hold, gracefulExit } = lifecycleSwitches(s, podAnnotations, nsAnnotations, warnings);
  const controller = s.sidecarClass.name === 'pipy' ? podController(workload, pod, f.title) : { kind: '', name: '' };
  const sidecar = sidecarContainer(s, {
    image,
    windows,
    uses: probes.uses,
    identity,
    cnPrefix: `${uuid}.sidecar.${identity}`,
    controller,
    hold,
    gracefulExit,
  });
  if (hold) containers.unshift(sidecar);
  else containers.push(sidecar);
  rec.containers.push(s.sidecarClass.containerName);

  setMeta('annotations', k.status, statusValue(rec));
  warnings.push(identityWarning(s, uuid, sa, workload.namespace), ...unsupportedWarnings(req));
  return { pod, summary: summaryOf(s), warnings };
}

/**
 * Refuses a pod that already has one of the names this injection adds (sidecar and healthcheck containers,
 * init container, bootstrap volume) without a status annotation `statusKey`: injected by the mesh's
 * webhook or by hand (src/drivers/kit/taken-names.ts).
 * @throws InjectError naming the field (`spec.containers`, `spec.initContainers`, `spec.volumes`)
 */
function refuseTaken(pod: PodTemplate, s: OsmSettings, statusKey: string): void {
  const f = s.flavor;
  const cls = s.sidecarClass;
  const names = {
    containers: [cls.containerName, f.healthcheckContainerName],
    initContainers: [f.initContainerName],
    volumes: [cls.volumeName],
  };
  refuseTakenNames(pod, names, statusKey, f.title);
}

/**
 * Refuses a pod or namespace annotation the mesh honours but this driver does not reproduce
 * (`Flavor.unsupportedAnnotationPrefixes`, e.g. FSM's `flomesh.io/sidecar-resource-limits`); the pod's first.
 * @throws InjectError with code `BAD_ANNOTATION`
 */
function refuseUnreproducedAnnotations(
  f: OsmSettings['flavor'],
  namespace: string,
  pod: Record<string, string>,
  ns: Record<string, string>,
): void {
  for (const [where, ann] of [
    ['pod', pod],
    [`namespace ${namespace}`, ns],
  ] as const) {
    const bad = Object.keys(ann).find((a) => f.unsupportedAnnotationPrefixes.some((p) => a.startsWith(p)));
    if (bad)
      throw new InjectError(
        `${where} annotation ${bad} is honoured by ${f.title} but not reproduced by meshinject: not injected`,
        { field: where === 'pod' ? `metadata.annotations[${bad}]` : undefined, code: 'BAD_ANNOTATION' },
      );
  }
}

/**
 * The name the proxy UUID is derived from: the workload's name, else the pod template's `generateName`.
 * @throws InjectError when there is neither
 */
function proxyName(workload: WorkloadRef, pod: PodTemplate): string {
  const name = workload.name !== '' ? workload.name : (pod.metadata.generateName ?? '');
  if (name === '')
    throw new InjectError(
      `the ${workload.kind} has neither metadata.name nor metadata.generateName: no stable proxy identity can be derived`,
      { field: 'metadata.name' },
    );
  return name;
}

/** Sets a label or annotation of `pod`, recording its previous value (null when absent) in `rec` the first time. */
type MetadataSetter = (field: 'labels' | 'annotations', key: string, value: string) => void;

/** The `MetadataSetter` of `pod` writing its record to `rec` (so that `removeInjection` can restore the pod). */
function metadataSetter(pod: PodTemplate, rec: StatusRecord): MetadataSetter {
  return (field, key, value) => {
    const m = { ...(pod.metadata[field] ?? {}) };
    const record = rec[field];
    if (!Object.hasOwn(record, key)) record[key] = m[key] ?? null;
    m[key] = value;
    pod.metadata[field] = m;
  };
}

/**
 * The sidecar image and whether the pod is a Windows pod (`nodeSelector` `kubernetes.io/os: windows`): the
 * configured Windows image (osm-edge `GetSidecarWindowsImage`), else `imageFor`.
 * @throws InjectError for a Windows pod with FSM (no Windows sidecar) or without a configured Windows image
 */
function sidecarImage(
  s: OsmSettings,
  pod: PodTemplate,
  podAnnotations: Record<string, string>,
  nsAnnotations: Record<string, string>,
): { windows: boolean; image: string } {
  const f = s.flavor;
  const os = isJsonObject(pod.spec.nodeSelector) ? pod.spec.nodeSelector['kubernetes.io/os'] : undefined;
  const windows = typeof os === 'string' && os.toLowerCase() === 'windows';
  if (windows && f.mesh === 'fsm')
    throw new InjectError(`${f.title} has no Windows sidecar (nodeSelector kubernetes.io/os: ${os}): not injected`, {
      field: 'spec.nodeSelector',
    });
  const image = windows ? s.images.windows : imageFor(s, podAnnotations, nsAnnotations);
  if (image === '') {
    throw new InjectError(
      `Windows pod (nodeSelector kubernetes.io/os: ${os}) but no Windows image for sidecar class ${s.sidecarClass.name}: set spec.${f.mesh}.meshConfig.sidecar.sidecarWindowsImage`,
      { field: 'spec.nodeSelector' },
    );
  }
  return { windows, image };
}

/**
 * OSM's Prometheus annotations (`createPatch`, pkg/injector/patch.go): when the namespace's metrics
 * annotation (`metrics`, the value of key `key`) is on, `prometheus.io/scrape`, `port` and `path`.
 * @throws InjectError with code `BAD_ANNOTATION` for a value that is not a switch (`readSwitch`)
 */
function addPrometheusAnnotations(
  metrics: string | undefined,
  key: string,
  namespace: string,
  setMeta: MetadataSetter,
): void {
  if (metrics === undefined || metrics === '') return;
  const on = readSwitch(metrics);
  if (on === undefined)
    throw new InjectError(
      `invalid value ${quoteData(metrics)} of annotation ${key} on Namespace ${namespace}: expected enabled, yes, true, disabled, no or false`,
      { code: 'BAD_ANNOTATION' },
    );
  if (on) {
    setMeta('annotations', 'prometheus.io/scrape', 'true');
    setMeta('annotations', 'prometheus.io/port', String(PORTS.prometheus));
    setMeta('annotations', 'prometheus.io/path', '/stats/prometheus');
  }
}

/**
 * Appends the bootstrap volume and, for a Linux pod with iptables interception, the iptables init container
 * (its script from the pod's exclusion annotations and the mesh-wide lists), recording both in `rec`.
 * @throws InjectError for an invalid exclusion annotation (`trafficLists`)
 */
function addBootstrapAndInit(
  pod: PodTemplate,
  s: OsmSettings,
  rec: StatusRecord,
  uuid: string,
  windows: boolean,
  podAnnotations: Record<string, string>,
): void {
  const f = s.flavor;
  pod.spec.volumes = [...list(pod.spec, 'volumes'), bootstrapVolume(s, uuid)];
  rec.volumes.push(s.sidecarClass.volumeName);
  if (!windows && s.interceptionMode === f.iptablesMode) {
    const script = iptablesScript(f, trafficLists(podAnnotations, s), s.localProxyMode);
    pod.spec.initContainers = [...list(pod.spec, 'initContainers'), initContainer(s, script)];
    rec.initContainers.push(f.initContainerName);
  }
}

/** Warnings for what the mesh does not support: `spec.nativeSidecars`, and (OSM) Jobs and CronJobs that would not complete. */
function unsupportedWarnings(req: InjectRequest<OsmSettings>): string[] {
  const f = req.settings.flavor;
  const kind = req.workload.kind;
  const out: string[] = [];
  if (req.config.nativeSidecars)
    out.push(`spec.nativeSidecars has no effect with ${f.title}: its injector adds the sidecar as a regular container`);
  if ((kind === 'Job' || kind === 'CronJob') && f.mesh === 'osm') {
    out.push(
      `${f.title} does not support Jobs: its sidecar keeps running after the job's containers finish, so the ${kind === 'Job' ? 'Job does' : "CronJob's Jobs do"} not complete`,
    );
  }
  return out;
}

/** The sidecar image of a Linux pod: FSM's `sidecar-image` annotation (pod, then namespace), else the configured one. */
function imageFor(s: OsmSettings, pod: Record<string, string>, ns: Record<string, string>): string {
  const key = s.flavor.sidecarImageAnnotation;
  if (key !== undefined) {
    const image = pod[key] || ns[key];
    if (image) return image;
  }
  return s.images.sidecar;
}

/**
 * FSM's hold-application / graceful-exit switches: the pod annotation, else the namespace's, else the mesh
 * setting; pipy only. An invalid value is read as false, as FSM does (it only logs), with a warning.
 */
function lifecycleSwitch(
  key: string,
  meshDefault: boolean,
  pod: Record<string, string>,
  ns: Record<string, string>,
  warnings: string[],
  s: OsmSettings,
): boolean {
  if (!s.flavor.lifecycleDefaults || s.sidecarClass.name !== 'pipy') return false;
  const found = annotationValue(key, pod, ns);
  if (!found) return meshDefault;
  const v = readSwitch(found.value);
  if (v === undefined)
    warnings.push(
      `${found.where} annotation ${key} is ${quoteData(found.value)}: ${s.flavor.title} reads it as disabled (expected enabled, yes, true, disabled, no or false)`,
    );
  return v ?? false;
}

/** What the cluster must provide for this workload's sidecar to start (the result's warning). */
function identityWarning(s: OsmSettings, uuid: string, sa: string, namespace: string): string {
  const cls = s.sidecarClass;
  return (
    `${s.flavor.title} identity is not minted offline: proxy UUID ${uuid} (label ${s.flavor.uuidLabel}) is fixed for this workload and shared by its replicas; ` +
    `the cluster must provide Secret ${namespace}/${cls.secretPrefix}${uuid} with the ${cls.name} bootstrap config and a certificate for CN ${uuid}.sidecar.${sa}.${namespace} (what the injector webhook would create), or the sidecar does not start`
  );
}
