/**
 * The `sidecar.istio.io/status` annotation: what an injection added, used to strip it on re-injection.
 * Istio `getInjectionStatus`, `injectionStatus`, `parseStatus` (pkg/kube/inject/webhook.go, inject.go).
 */
import { isJsonObject, isShared } from '../../json.ts';
import { goJSON, goJSONString } from '../go-json.ts';
import type { JsonObject } from '../../model.ts';
import type { InjectError } from '../../results/errors.ts';
import { unexpectedRecordItem, untrustedRecordError, type RecordedKind } from '../../patch/uninject.ts';

/** Annotation recording a previous injection. */
export const STATUS_ANNOTATION = 'sidecar.istio.io/status';

/** Names recorded by a previous injection (empty lists when the status has none). */
export interface InjectionStatus {
  initContainers: string[];
  containers: string[];
  volumes: string[];
  imagePullSecrets: string[];
  revision: string;
}

function names(list: unknown): string[] | null {
  if (!Array.isArray(list)) return null;
  const out = list.filter(isJsonObject).map((x) => (typeof x.name === 'string' ? x.name : ''));
  return out.length > 0 ? out : null;
}

/**
 * `goJSON(names(list))` per shared list (`isShared` of ../../json.ts: deep-frozen, so its names never
 * change). A planned render shares the token-free parts of its result (e.g. the sidecar template's volumes)
 * across every workload of the plan, and the template pod takes them uncopied: their text is worked out once.
 * Module state by design: a memo keyed by immutable objects, weakly held.
 */
const SHARED_NAMES_JSON = new WeakMap<object, string>();

/** `json.Marshal` of the entries' names (Go's escaping, ../go-json.ts), or `null` when there are none. */
function namesJson(list: unknown): string {
  if (!isShared(list)) return goJSON(names(list));
  const key = list as object;
  let text = SHARED_NAMES_JSON.get(key);
  if (text === undefined) {
    text = goJSON(names(list));
    SHARED_NAMES_JSON.set(key, text);
  }
  return text;
}

/**
 * The status annotation value for the rendered template pod `templateSpec` (all selected templates merged
 * into an empty pod), exactly as Go's `json.Marshal(SidecarInjectionStatus)` writes it: fields
 * initContainers, containers, volumes, imagePullSecrets (each `null` when empty), revision (`default` when
 * `revision` is empty). Example: `{"initContainers":["istio-init"],"containers":["istio-proxy"],...,"revision":"default"}`.
 * Istio `injectionStatus` (pkg/kube/inject/inject.go). Entries that are not objects are skipped, one without a
 * string name is written as `""`. Built field by field in Go's order, each list's text once per shared list.
 */
export function injectionStatusValue(templateSpec: JsonObject, revision: string): string {
  return (
    `{"initContainers":${namesJson(templateSpec.initContainers)},"containers":${namesJson(templateSpec.containers)},` +
    `"volumes":${namesJson(templateSpec.volumes)},"imagePullSecrets":${namesJson(templateSpec.imagePullSecrets)},` +
    `"revision":${goJSONString(revision === '' ? 'default' : revision)}}`
  );
}

function stringList(v: unknown): string[] | undefined {
  if (v === null || v === undefined) return [];
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) return undefined;
  return v;
}

/**
 * Parsed status values by text (`null`: not valid status JSON). Every workload a sidecar plan serves carries the
 * same status text, read by inject, the pruning of a previous injection, inventory and uninject.
 * Module state by design: a memo of a pure function of a string, its answers frozen; bounded (cleared when full).
 */
const PARSED_STATUS = new Map<string, Readonly<InjectionStatus> | null>();
const PARSED_STATUS_LIMIT = 256;

/**
 * Parses a status annotation value; `undefined` when absent or not valid status JSON (Go's `json.Unmarshal`
 * into `SidecarInjectionStatus` failing, which Istio treats as "not injected"). The result is frozen (its lists
 * too) and shared by every caller that parses the same text: read it, never change it.
 */
export function parseInjectionStatus(value: string | undefined): InjectionStatus | undefined {
  if (value === undefined) return undefined;
  const known = PARSED_STATUS.get(value);
  if (known !== undefined) return known ?? undefined;
  const parsed = parseStatusText(value);
  if (parsed) {
    for (const list of [parsed.initContainers, parsed.containers, parsed.volumes, parsed.imagePullSecrets])
      Object.freeze(list);
    Object.freeze(parsed);
  }
  if (PARSED_STATUS.size >= PARSED_STATUS_LIMIT) PARSED_STATUS.clear();
  PARSED_STATUS.set(value, parsed ?? null);
  return parsed;
}

/** {@link parseInjectionStatus} of a present value, parsed afresh. */
function parseStatusText(value: string): InjectionStatus | undefined {
  let v: unknown;
  try {
    v = JSON.parse(value);
  } catch {
    return undefined;
  }
  if (!isJsonObject(v as JsonObject)) return undefined;
  const o = v as Record<string, unknown>;
  const initContainers = stringList(o.initContainers);
  const containers = stringList(o.containers);
  const volumes = stringList(o.volumes);
  const imagePullSecrets = stringList(o.imagePullSecrets);
  if (!initContainers || !containers || !volumes || !imagePullSecrets) return undefined;
  if (o.revision !== undefined && typeof o.revision !== 'string') return undefined;
  return { initContainers, containers, volumes, imagePullSecrets, revision: o.revision ?? '' };
}

/** Containers and init containers the built-in Istio templates inject (sidecar, gateway, grpc-agent, grpc-simple). */
export const INJECTED_CONTAINER_NAMES: readonly string[] = [
  'istio-proxy',
  'istio-init',
  'istio-validation',
  'enable-core-dump',
  'grpc-bootstrap-init',
];

/**
 * Volumes the built-in Istio templates inject (sidecar, gateway, grpc-agent, grpc-simple), besides the user
 * volumes requested by `sidecar.istio.io/userVolume`.
 */
export const INJECTED_VOLUME_NAMES: readonly string[] = [
  'workload-socket',
  'credential-socket',
  'workload-certs',
  'gke-workload-certificate',
  'custom-bootstrap-volume',
  'istio-envoy',
  'istio-data',
  'istio-podinfo',
  'istio-token',
  'istiod-ca-cert',
  'istio-ca-crl',
  'istio-certs',
  'lightstep-certs',
  'istio-xds',
  'grpc-io-proxyless-bootstrap',
];

/** Annotation asking for extra volumes in the proxy (JSON map name → volume); its names are injected too. */
export const USER_VOLUME_ANNOTATION = 'sidecar.istio.io/userVolume';

function userVolumeNames(annotations: Record<string, string> | null | undefined): string[] {
  try {
    const v: unknown = JSON.parse(annotations?.[USER_VOLUME_ANNOTATION] ?? '{}');
    return isJsonObject(v) ? Object.keys(v) : [];
  } catch {
    return [];
  }
}

/** What the current injection adds besides the built-in names, by list (see {@link untrustedStatusItem}). */
export interface AlsoInjected {
  containers?: readonly string[];
  initContainers?: readonly string[];
  volumes?: readonly string[];
}

/**
 * The first container, init container or volume a status annotation lists that does not look injected: a
 * name no built-in Istio template gives (volumes: nor `sidecar.istio.io/userVolume`), and not in `alsoInjected`
 * (what the current injection adds under the same list, e.g. the app containers `grpc-simple` patches, or what
 * a user template of the configuration adds). A status naming the user's own container or volume is then
 * refused instead of deleting them (issue #8: the status annotation is not taken on trust; Istio's `stripPod`
 * trusts it). Image pull secrets are not checked: their names come from the values. The check itself is the
 * engine's `unexpectedRecordItem` (src/patch/uninject.ts).
 */
export function untrustedStatusItem(
  status: InjectionStatus,
  annotations: Record<string, string> | null | undefined,
  alsoInjected: AlsoInjected = {},
): { kind: RecordedKind; name: string } | undefined {
  return unexpectedRecordItem(statusChecks(status, annotations, alsoInjected));
}

/**
 * Every container, init container and volume of `status` that {@link untrustedStatusItem} does not accept,
 * in its order (containers, init containers, volumes); `[]` when it accepts all.
 */
export function untrustedStatusItems(
  status: InjectionStatus,
  annotations: Record<string, string> | null | undefined,
  alsoInjected: AlsoInjected = {},
): Array<{ kind: RecordedKind; name: string }> {
  return statusChecks(status, annotations, alsoInjected).flatMap(([kind, recorded, known]) => {
    const ok = new Set(known);
    return recorded.filter((name) => !ok.has(name)).map((name) => ({ kind, name }));
  });
}

/** `[kind, recorded names, accepted names]` for the containers, init containers and volumes of `status`. */
function statusChecks(
  status: InjectionStatus,
  annotations: Record<string, string> | null | undefined,
  alsoInjected: AlsoInjected,
): Array<[RecordedKind, readonly string[], readonly string[]]> {
  return [
    ['container', status.containers, [...INJECTED_CONTAINER_NAMES, ...(alsoInjected.containers ?? [])]],
    ['init container', status.initContainers, [...INJECTED_CONTAINER_NAMES, ...(alsoInjected.initContainers ?? [])]],
    [
      'volume',
      status.volumes,
      [...INJECTED_VOLUME_NAMES, ...userVolumeNames(annotations), ...(alsoInjected.volumes ?? [])],
    ],
  ];
}

/** The error refusing a status annotation that lists `item` (see {@link untrustedStatusItem}). */
export function untrustedStatusError(item: { kind: string; name: string }): InjectError {
  return untrustedRecordError(STATUS_ANNOTATION, item, `no Istio injection template adds a ${item.kind} of that name`);
}
