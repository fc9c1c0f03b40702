import type { Json, JsonObject, NamespaceInfo, PodTemplate } from '../../model.ts';
import type { WorkloadRef } from '../../contract/driver.ts';
import type { IstioSettings } from './config.ts';
import { goSprint } from '../../render/go-values.ts';
import { resolveProxyImage, resolveProxyInitImage } from './images.ts';
import { interceptionModeOf } from './proxy-config.ts';
import { deployMetaOf, ownerUri } from './workload-meta.ts';
import { deepFreeze, objectAt, isJsonObject, setOwn } from '../../json.ts';
import { deepFrozen } from '../../render/plan-keys.ts';
import { plannedJson } from '../../render/plan-values.ts';
import { scanTwoUint32 } from '../go-parse-scan.ts';

/** What {@link buildTemplateData} needs. */
export interface TemplateDataInput {
  /** The pod template with any previous injection stripped (Istio `stripPod`). */
  pod: PodTemplate;
  workload: WorkloadRef;
  namespace?: NamespaceInfo;
  settings: IstioSettings;
  /** The effective ProxyConfig (from `effectiveProxyConfig`). */
  proxyConfig: JsonObject;
  /** Native sidecars as resolved by the pipeline (config and node-version rules), before the pod annotation. */
  nativeSidecars: boolean;
}

/**
 * The data the Istio template ports render with: Istio's `SidecarTemplateData` (pkg/kube/inject/inject.go)
 * with Go field names at the top level and Kubernetes/protobuf JSON (camelCase) inside, plus values the
 * Go templates compute with `$variables`, precomputed here because Handlebars has no assignment.
 */
export interface IstioTemplateData {
  TypeMeta: { APIVersion: string; Kind: string };
  DeploymentMeta: { Name: string; Namespace: string };
  /** The pod's metadata; `labels` and `annotations` are always objects. */
  ObjectMeta: { name: string; namespace: string; labels: Record<string, string>; annotations: Record<string, string> };
  /** The pod spec; `containers` is always an array and `serviceAccountName` a string. */
  Spec: JsonObject & { containers: JsonObject[]; serviceAccountName: string };
  /** Effective ProxyConfig (protobuf JSON); `interceptionMode` and `proxyMetadata` are always set. */
  ProxyConfig: JsonObject & { interceptionMode: string; proxyMetadata: Record<string, string> };
  MeshConfig: JsonObject;
  Values: JsonObject;
  /** `spec.istio.revision`, or `default`. */
  Revision: string;
  NativeSidecars: boolean;
  ProxyImage: string;
  ProxyInitImage: string;
  ProxyUID: number;
  ProxyGID: number;
  /** `localhost`, `passthrough` or `undefined` from `meshConfig.inboundTrafficPolicy.mode`. */
  InboundTrafficPolicyMode: string;
  CompliancePolicy: string;
  /** Names of the pod's containers other than `istio-proxy` (template `$containers`). */
  AppContainers: string[];
  /** `structToJSON` of every container port, in container order (Go `ContainerPort` field order). */
  PodPorts: string[];
  /** `ISTIO_META_WORKLOAD_NAME`: label `service.istio.io/workload-name`, else the DeploymentMeta name. */
  WorkloadName: string;
  /** `ISTIO_META_OWNER` value, or `''` when the type or name is unknown. */
  Owner: string;
  /** Interception mode: annotation `sidecar.istio.io/interceptionMode`, else the ProxyConfig's. */
  InterceptionMode: string;
  /** Template `$nativeSidecar`: annotation `sidecar.istio.io/nativeSidecar` (`"false"` → off) else NativeSidecars. */
  Native: boolean;
  /** Template `$tproxy`. */
  TProxy: boolean;
  /** Template `$capNetBindService`: annotation `sidecar.istio.io/capNetBindService` or values say `true`. */
  CapNetBindService: boolean;
  /** Template `$holdProxy`: holdApplicationUntilProxyStarts (ProxyConfig or values) and not native. */
  HoldProxy: boolean;
  /** Template `$noInitContainer`: interception NONE and not native. */
  NoInitContainer: boolean;
  /** `valueOrDefault .MeshConfig.TrustDomain .Values.global.trustDomain`. */
  TrustDomain: string;
  /** Status port as the template sees it: annotation `status.sidecar.istio.io/port`, else values. */
  StatusPort: string;
}

const PROXY_UID = 1337;

function stringMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return out;
  for (const [k, val] of Object.entries(v)) setOwn(out, k, typeof val === 'string' ? val : String(val));
  return out;
}

/** The fields Go's `encoding/json` writes for a `corev1.ContainerPort`, in its order: name, hostPort, containerPort, protocol, hostIP (omitempty). */
function containerPortFields(port: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (port.name) out.name = port.name;
  if (port.hostPort) out.hostPort = port.hostPort;
  out.containerPort = port.containerPort ?? 0;
  if (port.protocol) out.protocol = port.protocol;
  if (port.hostIP) out.hostIP = port.hostIP;
  return out;
}

/** Go `encoding/json` of a `corev1.ContainerPort` (see `containerPortFields`). */
export function containerPortJSON(port: JsonObject): string {
  return JSON.stringify(containerPortFields(port));
}

/**
 * `PodPorts` for a sidecar plan (`src/render/plans.ts`), from the placeholder copy of `Spec`: each port's JSON
 * as plan text, names and numbers left as their tokens. Same walk as `buildTemplateData`.
 * @throws NoPlan for a port value that is a container holding placeholders.
 */
export function plannedPodPorts(planned: Readonly<Record<string, unknown>>): unknown[] {
  const spec = planned.Spec as { containers: unknown[] };
  return spec.containers
    .filter(isJsonObject<unknown>)
    .flatMap((c) =>
      (Array.isArray(c.ports) ? c.ports.filter(isJsonObject<unknown>) : []).map((p) =>
        plannedJson(containerPortFields(p)),
      ),
    );
}

/**
 * OpenShift `ParseBlock` of one block (`start/size` or `start-end`, Go `fmt.Sscanf` into `uint32`, ../go-parse-scan.ts):
 * the last id, wrapping as `uint32` does (`start + size - 1`: `0/0` is 4294967295), or undefined when Go refuses it.
 * Istio pkg/kube/inject/openshift.go (copied there from openshift/library-go pkg/security/uid/uid.go).
 */
function blockEnd(block: string): number | undefined {
  if (block.includes('/')) {
    const slash = scanTwoUint32(block, '/');
    return slash.ok ? (slash.value[0] + slash.value[1] - 1) >>> 0 : undefined;
  }
  const dash = scanTwoUint32(block, '-');
  return dash.ok ? dash.value[1] : undefined;
}

/**
 * The proxy UID and GID Istio `GetProxyIDs` takes from a namespace on OpenShift (pkg/kube/inject/inject.go): the UID
 * is the last id of `openshift.io/sa.scc.uid-range` parsed whole (what follows the first block is ignored); the GID
 * the last id of the first block of `openshift.io/sa.scc.supplemental-groups` (else of the UID range) split at
 * commas, every block parsing. An absent, empty or refused annotation leaves that id at `fallback` (1337).
 */
export function openshiftProxyIds(annotations: Record<string, string>, fallback: number): { uid: number; gid: number } {
  const uidRange = annotations['openshift.io/sa.scc.uid-range'];
  const uid = uidRange ? (blockEnd(uidRange) ?? fallback) : fallback;
  const groups = annotations['openshift.io/sa.scc.supplemental-groups'] ?? uidRange;
  const ends = groups ? groups.split(',').map(blockEnd) : [];
  const gid = ends.length > 0 && ends.every((e) => e !== undefined) ? (ends[0] ?? fallback) : fallback;
  return { uid, gid };
}

/**
 * The template data's `ProxyConfig` of each deep-frozen effective ProxyConfig (`inject.ts` gives one to every
 * pod without `proxy.istio.io/config`), itself deep-frozen: one object, so the sidecar plans key it once.
 * Module state by design: a memo keyed by deep-frozen objects (`deepFrozen` of ../../render/plan-keys.ts), a pure
 * function of them; weakly held.
 */
const templateProxyConfigs = new WeakMap<JsonObject, IstioTemplateData['ProxyConfig']>();

/**
 * The effective ProxyConfig as the templates see it: `interceptionMode` resolved (`interceptionModeOf`) and
 * `proxyMetadata` a map of strings; deep-frozen and shared when `pc` is (`templateProxyConfigs`), else fresh.
 */
function templateProxyConfig(pc: JsonObject): IstioTemplateData['ProxyConfig'] {
  const frozen = deepFrozen(pc);
  const known = frozen ? templateProxyConfigs.get(pc) : undefined;
  if (known) return known;
  const out = { ...pc, interceptionMode: interceptionModeOf(pc), proxyMetadata: stringMap(pc.proxyMetadata) };
  if (frozen) templateProxyConfigs.set(pc, deepFreeze(out));
  return out;
}

function isGoTrue(v: Json | undefined): boolean {
  return v === true || v === 'true';
}

/**
 * Builds the template data for one pod (Istio `RunTemplate` building `SidecarTemplateData`,
 * pkg/kube/inject/inject.go). Pure: reads only its input.
 *
 * Long by design: ported recipe (Istio `SidecarTemplateData` and the values it derives, field by field).
 */
export function buildTemplateData(input: TemplateDataInput): IstioTemplateData {
  const { pod, workload, namespace, settings } = input;
  const values = settings.values;
  const mesh = settings.meshConfig;
  const labels = stringMap(pod.metadata.labels);
  const annotations = stringMap(pod.metadata.annotations);
  const rawSpec = pod.spec ?? {};
  const containers = (Array.isArray(rawSpec.containers) ? rawSpec.containers : []).filter(isJsonObject);
  const spec = {
    ...rawSpec,
    containers,
    serviceAccountName: typeof rawSpec.serviceAccountName === 'string' ? rawSpec.serviceAccountName : '',
  };
  const proxyConfig = templateProxyConfig(input.proxyConfig);

  const { deployMeta, typeMeta } = deployMetaOf(pod, workload);
  const workloadName = labels['service.istio.io/workload-name'] ?? deployMeta.Name;

  const { uid, gid } =
    settings.platform === 'openshift'
      ? openshiftProxyIds(namespace?.annotations ?? {}, PROXY_UID)
      : { uid: PROXY_UID, gid: PROXY_UID };

  const proxyValues = objectAt(values, 'global', 'proxy');
  const interceptionMode = annotations['sidecar.istio.io/interceptionMode'] ?? proxyConfig.interceptionMode;
  const nativeAnnotation = annotations['sidecar.istio.io/nativeSidecar'];
  const nativeValue =
    nativeAnnotation === undefined || nativeAnnotation === '' ? String(input.nativeSidecars) : nativeAnnotation;
  const native = nativeValue !== 'false';
  const capAnnotation = annotations['sidecar.istio.io/capNetBindService'];
  const capNetBind = capAnnotation !== undefined ? capAnnotation === 'true' : isGoTrue(proxyValues.capNetBindService);
  const pcHold = proxyConfig.holdApplicationUntilProxyStarts;
  const hold =
    (isJsonObject(pcHold) ? isGoTrue(pcHold.value) : isGoTrue(pcHold)) ||
    isGoTrue(proxyValues.holdApplicationUntilProxyStarts);
  const modeValue = objectAt(mesh, 'inboundTrafficPolicy').mode;
  const inboundMode =
    modeValue === 'LOCALHOST' || modeValue === 1
      ? 'localhost'
      : modeValue === undefined || modeValue === 'PASSTHROUGH' || modeValue === 0
        ? 'passthrough'
        : 'undefined';
  const meshTrustDomain = typeof mesh.trustDomain === 'string' ? mesh.trustDomain : '';
  const valuesTrustDomain = objectAt(values, 'global').trustDomain;
  const statusPortValue = proxyValues.statusPort;

  return {
    TypeMeta: typeMeta,
    DeploymentMeta: deployMeta,
    ObjectMeta: {
      name: typeof pod.metadata.name === 'string' ? pod.metadata.name : '',
      namespace: typeof pod.metadata.namespace === 'string' ? pod.metadata.namespace : '',
      labels,
      annotations,
    },
    Spec: spec,
    ProxyConfig: proxyConfig,
    MeshConfig: mesh,
    Values: values,
    Revision: settings.revision || 'default',
    NativeSidecars: input.nativeSidecars,
    ProxyImage: resolveProxyImage(values, proxyConfig, annotations),
    ProxyInitImage: resolveProxyInitImage(values, proxyConfig, annotations),
    ProxyUID: uid,
    ProxyGID: gid,
    InboundTrafficPolicyMode: inboundMode,
    CompliancePolicy: settings.compliancePolicy,
    AppContainers: containers.map((c) => String(c.name ?? '')).filter((n) => n !== 'istio-proxy'),
    PodPorts: containers.flatMap((c) =>
      (Array.isArray(c.ports) ? c.ports.filter(isJsonObject) : []).map(containerPortJSON),
    ),
    WorkloadName: workloadName,
    Owner: typeMeta.APIVersion && deployMeta.Name ? ownerUri(typeMeta, deployMeta) : '',
    InterceptionMode: interceptionMode,
    Native: native,
    TProxy: interceptionMode === 'TPROXY',
    CapNetBindService: capNetBind,
    HoldProxy: hold && !native,
    NoInitContainer: interceptionMode === 'NONE' && !native,
    TrustDomain:
      meshTrustDomain !== '' ? meshTrustDomain : typeof valuesTrustDomain === 'string' ? valuesTrustDomain : '',
    StatusPort: annotations['status.sidecar.istio.io/port'] ?? goSprint(statusPortValue),
  };
}
