/**
 * The Istio injection pipeline for one pod template, as `istioctl kube-inject` runs it (Istio `IntoObject` →
 * `injectPod` → `RunTemplate`, `reapplyOverwrittenContainers`, `postProcessPod`; pkg/kube/inject/inject.go and
 * webhook.go; istio-injection.md §5). Pure: the request's pod is not mutated, a new pod is returned.
 */
import type { Json, JsonObject, PodTemplate } from '../../model.ts';
import type { InjectRequest } from '../../contract/driver.ts';
import type { IstioSettings } from './config.ts';
import { cloneJson } from '../../patch/strategic-merge.ts';
import { POD_SCHEMA } from '../../patch/patch-schema.ts';
import { type TrustedPatch, trustedIntoEmpty } from '../../patch/trusted-patch.ts';
import { InjectError, MeshInjectError } from '../../results/errors.ts';
import { quoteData } from '../../results/quote.ts';
import type { GoParsed } from '../go-parse.ts';
import { decodeJsonpbBool, decodeJsonpbInt } from '../go-parse-decode.ts';
import { effectiveProxyConfig, interceptionModeOf, PROXY_CONFIG_ANNOTATION } from './proxy-config.ts';
import { buildTemplateData } from './template-data.ts';
import { describeSources, type RenderContext, renderNamed, templateNamesFor } from './go-render.ts';
import type { TemplateOrigin } from './template-sources.ts';
import { normalizeFragment, type RenderedFragment } from './render.ts';
import { checkedFragment, fragmentOf, mergeInto, nullFreeFor, plannedNullDrop } from './fragment-merge.ts';
import { validateAnnotations } from './validate.ts';
import { reapplyOverwrittenContainers, reinsertOverrides } from './overrides.ts';
import { clusterEnvs, postProcessPod } from './postprocess.ts';
import { clearPrometheusAnnotations, prometheusPort } from './prometheus.ts';
import { parseInjectionStatus, STATUS_ANNOTATION, untrustedStatusError, untrustedStatusItem } from './status.ts';
import { objectAt, isJsonObject, assignOwn, setOwn, deepFreeze } from '../../json.ts';
import {
  containersOf,
  findContainer,
  findSidecar,
  INIT_CONTAINER,
  modifyContainers,
  PROXY_CONTAINER,
  VALIDATION_CONTAINER,
} from './pod-fields.ts';
import { defined } from '../../checked.ts';

/** Pod annotation choosing native sidecars per pod (`"false"` → off, any other value → on). */
export const NATIVE_SIDECAR_ANNOTATION = 'sidecar.istio.io/nativeSidecar';

/** Result of {@link injectIstioPod}. */
export interface IstioInjection {
  pod: PodTemplate;
  warnings: string[];
  /** Which source rendered which template (empty when only the built-in templates were used). */
  sources: string;
}

/**
 * Whether Istio moves a user's `istio-proxy` container to the init containers (a native sidecar): the
 * `sidecar.istio.io/nativeSidecar` annotation when it is exactly `"true"` or `"false"`, else `config.nativeSidecars`
 * (Istio `ENABLE_NATIVE_SIDECARS`). Istio compares the strings (`injectPod`, pkg/kube/inject/inject.go), no
 * `ParseBool`: `"True"` or `"yes"` leave the configured value. (The template reads the same annotation its own
 * way: anything but `"false"` is native.)
 */
export function resolveNativeSidecars(annotations: Record<string, string> | undefined, configNative: boolean): boolean {
  const a = annotations?.[NATIVE_SIDECAR_ANNOTATION];
  if (a === 'true') return true;
  if (a === 'false') return false;
  return configNative;
}

/**
 * Istio `stripPod`: a copy of the pod without what the previous injection (status annotation) added — its
 * containers and init containers, the prometheus annotations when they point at the status port, the status
 * annotation. Volumes stay. Returns the pod itself when there is no valid status.
 */
export function stripPod(pod: PodTemplate, statusPort: number): PodTemplate {
  const status = parseInjectionStatus(pod.metadata.annotations?.[STATUS_ANNOTATION]);
  if (!status) return pod;
  const out = cloneJson(pod);
  for (const list of ['containers', 'initContainers'] as const) {
    if (!Array.isArray(out.spec[list])) continue;
    let cs = containersOf(out.spec, list);
    for (const name of status[list]) cs = modifyContainers(cs, name, 'remove');
    out.spec[list] = cs;
  }
  const annos = out.metadata.annotations ?? {};
  if (prometheusPort(annos) === String(statusPort)) clearPrometheusAnnotations(annos);
  delete annos[STATUS_ANNOTATION];
  return out;
}

/**
 * The mesh's ProxyConfig per mesh config object (deep-frozen: shared by every pod without `proxy.istio.io/config`).
 * Module state by design: a memo keyed by a mesh config object, never changed after loading; its result is frozen.
 */
const meshProxyConfigs = new WeakMap<JsonObject, JsonObject>();

/**
 * `effectiveProxyConfig` computed once per run for pods without a `proxy.istio.io/config` annotation (it then
 * depends on the mesh config alone); the shared result is frozen, so a caller that would mutate it throws.
 */
function proxyConfigFor(meshConfig: JsonObject, annotations: Record<string, string>): JsonObject {
  if (Object.hasOwn(annotations, PROXY_CONFIG_ANNOTATION)) return effectiveProxyConfig(meshConfig, annotations);
  let pc = meshProxyConfigs.get(meshConfig);
  if (!pc) {
    pc = deepFreeze(effectiveProxyConfig(meshConfig, annotations));
    meshProxyConfigs.set(meshConfig, pc);
  }
  return pc;
}

/**
 * A proto field of the proxy config or the values as Istio decodes it (`protomarshal.ApplyYAML`, jsonpb: an int32
 * from a number or a string holding one, a bool or BoolValue from `true`/`false` only), `fallback` when unset.
 * @throws InjectError naming `source` and Go's error when jsonpb refuses the value (istiod refuses such config)
 */
function protoField<T>(
  decode: (v: Json, field: string) => GoParsed<T> | undefined,
  v: Json | undefined,
  source: string,
  fallback: T,
): T {
  const d = v === undefined ? undefined : decode(v, source);
  if (d === undefined) return fallback;
  if (d.ok) return d.value;
  throw new InjectError(`invalid value ${quoteData(v ?? null)} for ${source}: ${d.error}`, { code: 'BAD_ANNOTATION' });
}

const int32Field = (v: Json, field: string) => decodeJsonpbInt(v, 'int32', field);
const PROXY_CONFIG_SOURCE = `the proxy config (annotation ${PROXY_CONFIG_ANNOTATION} over meshConfig.defaultConfig)`;

/**
 * `statusPort` of the frozen proxy configs (`proxyConfigFor`'s shared one), by config.
 * Module state by design: a memo keyed by deep-frozen proxy configs, of a pure function of them.
 */
const STATUS_PORTS = new WeakMap<JsonObject, number>();

/**
 * The proxy config's `statusPort` as Istio decodes it (`protoField`: int32, 15020 when unset); remembered for a frozen
 * config (which cannot change), worked out each time for another. A value jsonpb refuses is never remembered, so
 * every pod asking for it gets the error.
 * @throws InjectError when jsonpb refuses the value
 */
function statusPortOf(proxyConfig: JsonObject): number {
  const known = STATUS_PORTS.get(proxyConfig);
  if (known !== undefined) return known;
  const port = protoField(int32Field, proxyConfig.statusPort, `statusPort of ${PROXY_CONFIG_SOURCE}`, 15020);
  if (Object.isFrozen(proxyConfig)) STATUS_PORTS.set(proxyConfig, port);
  return port;
}

/**
 * A template or overlay failure as a `TEMPLATE` error with Istio's context (`failed applying injection
 * overlay: ...`, pkg/kube/inject/webhook.go); an error a driver step already words for the user passes.
 */
function wrap(e: unknown, context: string): never {
  if (e instanceof MeshInjectError && e.code !== 'BAD_MERGE') throw e;
  throw new InjectError(`${context}: ${(e as Error).message}`, { code: 'TEMPLATE' });
}

/**
 * OpenShift assigns the same `runAsUser` to every container; Istio's webhook therefore drops
 * runAsUser/runAsGroup from a user `istio-proxy` whose runAsUser equals the app containers' (Istio
 * `isSidecarUserMatchingAppUser`, pkg/kube/inject/webhook.go). In place.
 */
export function resetOpenShiftProxyUser(pod: PodTemplate): void {
  const sidecar = findSidecar(pod.spec);
  if (!sidecar || !isJsonObject(sidecar.securityContext)) return;
  let sidecarUser: Json = 0;
  let appUser: Json = 0;
  for (const c of containersOf(pod.spec, 'containers')) {
    const uid = isJsonObject(c.securityContext) ? c.securityContext.runAsUser : undefined;
    if (uid === undefined || uid === null) continue;
    if (c.name === PROXY_CONTAINER) sidecarUser = uid;
    else if (c.name !== VALIDATION_CONTAINER && c.name !== INIT_CONTAINER) appUser = uid;
  }
  if (sidecarUser !== appUser) return;
  delete sidecar.securityContext.runAsUser;
  delete sidecar.securityContext.runAsGroup;
}

/** Istio `checkPreconditions`: a warning when `dnsPolicy` is set and not `ClusterFirst`. */
function preconditionWarnings(pod: PodTemplate, workload: InjectRequest['workload']): string[] {
  const dns = pod.spec.dnsPolicy;
  if (typeof dns !== 'string' || dns === '' || dns === 'ClusterFirst') return [];
  const name = pod.metadata.name || workload.name;
  return [
    `"${workload.namespace}/${name}"'s DNSPolicy is not "ClusterFirst" but "${dns}": the Envoy sidecar may not be able to connect to Istio Pilot`,
  ];
}

/**
 * Injects the Istio sidecar into one pod template (kube-inject semantics; the decision to inject is made by
 * the caller). Steps: validate annotations; apply `proxy.istio.io/config` to the mesh; strip a previous
 * injection and reinsert saved overrides for the template data; render each selected template and
 * strategic-merge it into an empty template pod and into the original pod (moving a user `istio-proxy` to the
 * init containers when the template made it native); re-apply user containers named like injected ones;
 * post-process (cluster env, prometheus, probes, status annotation, order).
 * @throws InjectError for invalid annotations, unknown templates, template or merge failures
 *
 * Long by design: ported recipe (Istio `injectPod`: `RunTemplate` → `reapplyOverwrittenContainers` → `postProcessPod`, in its order).
 */
export function injectIstioPod(req: InjectRequest<IstioSettings>): IstioInjection {
  const { config, settings: istio } = req;
  const original = cloneJson(req.pod);
  if (istio.platform === 'openshift') resetOpenShiftProxyUser(original);
  const annotations = original.metadata.annotations ?? {};
  validateAnnotations(annotations);

  const proxyConfig = proxyConfigFor(istio.meshConfig, annotations);
  const values = istio.values;
  const statusPort = statusPortOf(proxyConfig);
  const proxyEnvs = clusterEnvs(values, original.metadata.labels);

  const stripped = reinsertOverrides(stripPod(original, statusPort));
  const data = buildTemplateData({
    pod: stripped,
    workload: req.workload,
    ...(req.namespace ? { namespace: req.namespace } : {}),
    settings: istio,
    proxyConfig,
    nativeSidecars: config.nativeSidecars,
  });

  const native = resolveNativeSidecars(annotations, config.nativeSidecars);
  const previous = parseInjectionStatus(annotations[STATUS_ANNOTATION]);
  if (
    findContainer(PROXY_CONTAINER, containersOf(original.spec, 'initContainers')) &&
    !previous?.initContainers.includes(PROXY_CONTAINER)
  ) {
    throw userInitProxyError(original);
  }
  // Templates of Istio 1.22-1.26 read `env "ENABLE_NATIVE_SIDECARS"`: answer it from the config (once per run).
  if (!Object.hasOwn(istio.env, 'ENABLE_NATIVE_SIDECARS'))
    istio.env.ENABLE_NATIVE_SIDECARS = String(config.nativeSidecars);
  const ctx: RenderContext = {
    settings: istio,
    builtinData: data,
    pod: stripped,
    nativeSidecars: config.nativeSidecars,
  };
  const used: Array<{ name: string; origin: TemplateOrigin }> = [];
  let merged = cloneJson(original);
  // `merged` is this fresh copy until the first merge, which merges into it in place. After it, `merged` holds
  // shared (deep-frozen) parts of the fragment: a later template's merge copies it first, as ever, which also
  // makes those parts writable for the steps after it.
  let mergedFresh = true;
  let templatePod: PodTemplate = { metadata: {}, spec: {} };
  for (const name of templateNamesFor(annotations, istio)) {
    let rendered: RenderedFragment;
    let fragment: JsonObject;
    try {
      const r = renderNamed(name, ctx);
      used.push({ name, origin: r.origin });
      rendered = r.fragment;
      fragment = fragmentOf(rendered);
    } catch (e) {
      wrap(e, `failed to run injection template "${name}"`);
    }
    // A freshly parsed fragment without directives or nulls is checked once for both merges; the template
    // pod takes its values uncopied (nobody else holds the fragment), the merged pod gets a copy.
    const checked = checkedFragment(rendered, fragment);
    let intoTemplate: TrustedPatch | undefined;
    try {
      // Into the still empty template pod (the first template), a fragment's nulls delete nothing: it merges as
      // checked, without them, and the template pod holds the fragment's parts uncopied (`trustedIntoEmpty`, which
      // checks the pod is empty; the merged pod gets copies).
      intoTemplate = checked ?? trustedIntoEmpty(templatePod, fragment, POD_SCHEMA, plannedNullDrop(rendered));
      templatePod = mergeInto(templatePod, fragment, intoTemplate, false);
    } catch (e) {
      wrap(e, 'failed applying injection overlay');
    }
    if (
      native &&
      findContainer(PROXY_CONTAINER, containersOf(templatePod.spec, 'initContainers')) &&
      findContainer(PROXY_CONTAINER, containersOf(merged.spec, 'containers'))
    ) {
      const cs = containersOf(merged.spec, 'containers');
      const proxy = defined(findContainer(PROXY_CONTAINER, cs), 'the istio-proxy container just found');
      merged.spec.containers = cs.filter((c) => c !== proxy);
      merged.spec.initContainers = [...containersOf(merged.spec, 'initContainers'), proxy];
    } else if (
      findContainer(PROXY_CONTAINER, containersOf(templatePod.spec, 'containers')) &&
      findContainer(PROXY_CONTAINER, containersOf(original.spec, 'initContainers')) &&
      findContainer(PROXY_CONTAINER, containersOf(merged.spec, 'initContainers')) &&
      !findContainer(PROXY_CONTAINER, containersOf(merged.spec, 'containers'))
    ) {
      // meshinject: the reverse move (native → classic sidecar), which Istio does not do, so that an
      // upgrade keeps the old proxy's merged state (e.g. ISTIO_KUBE_APP_PROBERS) in one container. Only for a
      // proxy the input already had: a template run after a native `sidecar` may add its own `istio-proxy`.
      const inits = containersOf(merged.spec, 'initContainers');
      const proxy = defined(findContainer(PROXY_CONTAINER, inits), 'the istio-proxy init container just found');
      // Native-only fields of the old proxy; the template sets `lifecycle` again when values ask for it.
      delete proxy.restartPolicy;
      delete proxy.lifecycle;
      merged.spec.initContainers = inits.filter((c) => c !== proxy);
      merged.spec.containers = [...containersOf(merged.spec, 'containers'), proxy];
    }
    // A built-in template's fragment held by the template pod is given to the merged pod uncopied (`nullFreeFor`):
    // nothing writes into the template pod after this merge (a later template's merges copy both pods first, and
    // only another source's fragment is normalized below, in both pods), and what is read of it afterwards, the
    // names of its containers, init containers, volumes and pull secrets, the proxy's image (read before any step
    // writes), and each container's key order (`alignInjectedKeyOrder`), is what it was: the steps after change
    // values and add keys at the end of a container, never removing one, and a container that is the template
    // pod's own, or its copy with keys added at the end, is kept as it is there.
    const shareClean = used[used.length - 1]?.origin === 'builtin';
    try {
      merged = checked
        ? mergeInto(merged, fragment, checked, true, mergedFresh)
        : mergeInto(merged, fragment, nullFreeFor(merged, fragment, intoTemplate, !shareClean), false, mergedFresh);
      mergedFresh = false;
    } catch (e) {
      wrap(e, 'failed parsing generated injected YAML (check Istio sidecar injector configuration)');
    }
    if (used[used.length - 1]?.origin !== 'builtin') {
      normalizeFragment(templatePod.spec);
      normalizeFragment(merged.spec);
    }
  }

  if (previous) {
    const listed = (list: Json | undefined) =>
      (Array.isArray(list) ? list : []).filter(isJsonObject).map((c) => String(c.name));
    const untrusted = untrustedStatusItem(previous, annotations, {
      containers: listed(templatePod.spec.containers),
      initContainers: listed(templatePod.spec.initContainers),
      volumes: listed(templatePod.spec.volumes),
    });
    if (untrusted) throw untrustedStatusError(untrusted);
  }

  const tproxy = interceptionModeOf(proxyConfig) === 'TPROXY';
  const final = reapplyOverwrittenContainers(merged, original, templatePod.spec, tproxy, istio.revision);
  const holdApplication =
    protoField(
      decodeJsonpbBool,
      proxyConfig.holdApplicationUntilProxyStarts,
      `holdApplicationUntilProxyStarts of ${PROXY_CONFIG_SOURCE}`,
      false,
    ) ||
    protoField(
      decodeJsonpbBool,
      objectAt(values, 'global', 'proxy').holdApplicationUntilProxyStarts,
      'values global.proxy.holdApplicationUntilProxyStarts',
      false,
    );
  postProcessPod(final, {
    proxyEnvs,
    meshConfig: istio.meshConfig,
    statusPort,
    rewriteProbes: protoField(
      decodeJsonpbBool,
      objectAt(values, 'sidecarInjectorWebhook').rewriteAppHTTPProbe,
      'values sidecarInjectorWebhook.rewriteAppHTTPProbe',
      false,
    ),
    holdApplication,
    templateSpec: templatePod.spec,
    revision: istio.revision,
  });
  // Istio `applyMetadata`: the injector config's injectedAnnotations. The webhook passes them; kube-inject
  // passes none (IntoObject sets `injectedAnnotations: nil`), so only webhook selection applies them.
  if (istio.selection === 'webhook') {
    final.metadata.annotations ??= {};
    assignOwn(final.metadata.annotations, istio.templates.injectedAnnotations);
  }
  pruneStaleInjection(final, original);
  alignInjectedKeyOrder(final, templatePod);
  const sources = used.every((u) => u.origin === 'builtin') ? '' : describeSources(used, istio);
  return { pod: final, warnings: preconditionWarnings(original, req.workload), sources };
}

/**
 * The error for a user init container named `istio-proxy`: no previous injection (status annotation) made it
 * a native proxy, so it is the user's. Merging the proxy into it would make it vanish (issue #8; Istio writes
 * both for a classic sidecar, an invalid pod). Istio documents proxy customisation as a *container* named
 * `istio-proxy` (moved to the init containers for a native sidecar), which is what `proxy.istio.io/overrides`
 * then records under `initContainers`; refusing the init-container form keeps that record unambiguous for uninject.
 */
function userInitProxyError(pod: PodTemplate): InjectError {
  const i = containersOf(pod.spec, 'initContainers').findIndex((c) => c.name === PROXY_CONTAINER);
  return new InjectError(
    `init container "${PROXY_CONTAINER}" is not an injected proxy (${STATUS_ANNOTATION} does not list it), and the name is that of the proxy container Istio injects: rename it`,
    { field: `spec.initContainers[${i}].name` },
  );
}

/**
 * Puts the keys of every injected container in the order the template renders them (then any other
 * keys), so a re-injected container reads like a freshly injected one; strategic merge keeps the old
 * container's key order. Only key order changes. In place.
 */
export function alignInjectedKeyOrder(pod: PodTemplate, templatePod: PodTemplate): void {
  for (const list of ['containers', 'initContainers'] as const) {
    const templ = containersOf(templatePod.spec, list);
    if (!Array.isArray(pod.spec[list]) || templ.length === 0) continue;
    pod.spec[list] = containersOf(pod.spec, list).map((c) => {
      const t = findContainer(String(c.name), templ);
      if (!t || inTemplateOrder(c, t)) return c;
      const out: JsonObject = {};
      for (const k of Object.keys(t)) if (Object.hasOwn(c, k)) setOwn(out, k, c[k]);
      for (const k of Object.keys(c)) if (!Object.hasOwn(out, k)) setOwn(out, k, c[k]);
      return out;
    });
  }
}

/**
 * Whether the copy `alignInjectedKeyOrder` makes of container `c` (template `t`) would hold `c`'s own keys in `c`'s
 * order, with `c`'s values: then it equals `c`, which is kept. So when the keys of `t` that `c` holds open `c`, in
 * `t`'s order, and none of `c`'s other keys is a name the copy drops (one `in` a plain object: `constructor`,
 * `__proto__`, ...). A freshly injected container (the template's, merged into nothing) is so. Conservative: any
 * doubt answers false and the copy is made.
 */
function inTemplateOrder(c: JsonObject, t: JsonObject): boolean {
  const own = Object.keys(c);
  let i = 0;
  for (const k of Object.keys(t)) {
    if (!Object.hasOwn(c, k)) continue;
    if (own[i] !== k) return false;
    i++;
  }
  for (; i < own.length; i++) if ((own[i] as string) in Object.prototype) return false;
  return true;
}

/**
 * meshinject's clean upgrade (Istio leaves these behind): removes what the previous injection added
 * (old `sidecar.istio.io/status`) and the new one did not add again: containers, init containers,
 * volumes and image pull secrets, e.g. `istio-validation` after CNI is turned off, or a volume a newer
 * template no longer uses. In place.
 */
export function pruneStaleInjection(pod: PodTemplate, original: PodTemplate): void {
  const before = parseInjectionStatus(original.metadata.annotations?.[STATUS_ANNOTATION]);
  if (!before) return; // (a first injection: the new status is not read)
  const after = parseInjectionStatus(pod.metadata.annotations?.[STATUS_ANNOTATION]);
  if (!after) return;
  const nowContainers = new Set([...after.containers, ...after.initContainers]);
  const stale = (names: string[], keep: Set<string>) => new Set(names.filter((n) => !keep.has(n)));
  const staleContainers = stale([...before.containers, ...before.initContainers], nowContainers);
  for (const list of ['containers', 'initContainers'] as const) {
    if (!Array.isArray(pod.spec[list])) continue;
    pod.spec[list] = containersOf(pod.spec, list).filter((c) => !staleContainers.has(String(c.name)));
  }
  for (const [field, names, keep] of [
    ['volumes', before.volumes, after.volumes],
    ['imagePullSecrets', before.imagePullSecrets, after.imagePullSecrets],
  ] as const) {
    const drop = stale(names, new Set(keep));
    const list = pod.spec[field];
    if (drop.size === 0 || !Array.isArray(list)) continue;
    pod.spec[field] = list.filter((v) => !(isJsonObject(v) && drop.has(String(v.name))));
    if (pod.spec[field].length === 0) delete pod.spec[field];
  }
}

/** `InjectResponse.summary` for a config: `istio, revision <revision|default>`. */
export function injectionSummary(settings: IstioSettings): string {
  return `istio, revision ${settings.revision === '' ? 'default' : settings.revision}`;
}
