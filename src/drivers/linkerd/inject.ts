/**
 * One Linkerd injection, the way `linkerd inject` does it (cli/cmd/inject.go `uninjectAndInject` +
 * `resourceTransformerInject.transform`, pkg/inject/inject.go `GetPodPatch`, charts/patch/templates/patch.json):
 * 1. strip a previous Linkerd injection (the silent `uninject` pass; `./inventory.ts`), keeping the pod's
 *    own `linkerd.io/inject` annotation;
 * 2. refuse what Linkerd refuses (`Report.Injectable` / `ThrowInjectError`): host network, another mesh's
 *    sidecar, `automountServiceAccountToken: false` without token projection, a control-plane component
 *    without `manual` (a kind `linkerd inject` does not handle never gets here: `./decide.ts` skips it);
 * 3. annotate: the override annotations, `linkerd.io/inject: enabled` (annotation-only mode) or, with
 *    `manual`, `linkerd.io/created-by`, `linkerd.io/proxy-version`, `linkerd.io/trust-root-sha256` and the labels;
 * 4. with `manual`: the per-pod values (namespace, override and pod `config.linkerd.io/*` annotations), then
 *    the init container (or the CNI network validator), the debug container, the volumes and the proxy, at
 *    the positions patch.json adds them.
 */
import { createHash } from 'node:crypto';
import { cloneJson, setOwn } from '../../json.ts';
import type { JsonObject, PodTemplate } from '../../model.ts';
import { InjectError } from '../../results/errors.ts';
import { parseCIDR } from '../go-parse.ts';
import type { InjectRequest } from '../../contract/driver.ts';
import {
  A,
  CONTROL_PLANE_COMPONENT_LABEL,
  CONTROL_PLANE_NS_LABEL,
  CREATED_BY_ANNOTATION,
  INJECT_ANNOTATION,
  LINKERD_KINDS,
  PROXY_VERSION_ANNOTATION,
  TRUST_ROOT_SHA_ANNOTATION,
  unknownConfigKeyWarnings,
  WORKLOAD_NS_LABEL,
  XTABLES_VOLUME,
} from './annotations.ts';
import type { LinkerdSettings } from './config.ts';
import {
  debugContainer,
  identityVolumes,
  networkValidatorContainer,
  proxyContainer,
  proxyInitContainer,
  type PodFacts,
} from './containers.ts';
import { linkerdInventory, removeInventory } from './inventory.ts';
import { applyOverrides, effectiveAnnotations } from './overrides.ts';
import type { LinkerdValues } from './values.ts';

type Container = JsonObject & { name?: string; image?: string };

const list = (v: unknown): Container[] => (Array.isArray(v) ? (v as Container[]) : []);

/** Linkerd `HasExistingSidecars` (pkg/healthcheck/sidecar.go): a Linkerd or Istio proxy or init container by name or image. */
export function existingSidecar(spec: JsonObject): string | undefined {
  const inits = list(spec.initContainers);
  for (const c of [...inits, ...list(spec.containers)]) {
    const image = typeof c.image === 'string' ? c.image : '';
    if (
      image.startsWith('cr.l5d.io/linkerd/proxy:') ||
      image.startsWith('gcr.io/istio-release/proxyv2:') ||
      c.name === 'linkerd-proxy' ||
      c.name === 'istio-proxy'
    )
      return String(c.name);
  }
  for (const c of inits) {
    const image = typeof c.image === 'string' ? c.image : '';
    if (
      image.startsWith('cr.l5d.io/linkerd/proxy-init:') ||
      image.startsWith('gcr.io/istio-release/proxy_init:') ||
      c.name === 'linkerd-init' ||
      c.name === 'istio-init'
    )
      return String(c.name);
  }
  return undefined;
}

/**
 * Linkerd `getPodInboundPorts`: every container and init container port plus numeric HTTP probe ports,
 * de-duplicated and sorted as strings (Go `sort.Strings`), comma-separated.
 */
export function podInboundPorts(spec: JsonObject): string {
  const ports = new Set<string>();
  for (const c of [...list(spec.initContainers), ...list(spec.containers)]) {
    for (const p of list(c.ports)) if (typeof p.containerPort === 'number') ports.add(String(p.containerPort));
    for (const probe of [c.readinessProbe, c.livenessProbe]) {
      const port = (probe as { httpGet?: { port?: unknown } } | undefined)?.httpGet?.port;
      if (typeof port === 'number') ports.add(String(port));
    }
  }
  return [...ports].sort().join(',');
}

/** Container port names → numbers (Linkerd `GetNamedPorts`, init containers first). */
function namedPorts(spec: JsonObject): Map<string, number> {
  const out = new Map<string, number>();
  for (const c of [...list(spec.initContainers), ...list(spec.containers)]) {
    for (const p of list(c.ports))
      if (typeof p.name === 'string' && p.name !== '' && typeof p.containerPort === 'number')
        out.set(p.name, p.containerPort);
  }
  return out;
}

/** What the first app container contributes (Linkerd `injectPodSpec`, `serviceAccountVolumeMount`). */
function podFacts(spec: JsonObject, controlPlaneNamespace: string): PodFacts {
  const first = list(spec.containers)[0];
  const facts: PodFacts = { controlPlaneNamespace };
  const caps = (first?.securityContext as { capabilities?: { add?: unknown; drop?: unknown } } | undefined)
    ?.capabilities;
  if (caps && typeof caps === 'object') {
    const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
    facts.capabilities = { add: strings(caps.add), drop: strings(caps.drop) };
  }
  const sa = list(first?.volumeMounts).find((m) => m.mountPath === '/var/run/secrets/kubernetes.io/serviceaccount');
  if (sa && typeof sa.name === 'string')
    facts.saMount = { name: sa.name, mountPath: String(sa.mountPath), readOnly: sa.readOnly === true };
  return facts;
}

/** The refusals of `linkerd inject` for a pod template already stripped of a previous Linkerd injection. */
function refuse(req: InjectRequest<LinkerdSettings>, pod: PodTemplate): void {
  const { settings } = req;
  if (!settings.manual && Object.hasOwn(pod.metadata.labels ?? {}, CONTROL_PLANE_COMPONENT_LABEL)) {
    throw new InjectError(
      `spec.linkerd.manual must be set when injecting control plane components (pod label ${CONTROL_PLANE_COMPONENT_LABEL}; linkerd: --manual must be set when injecting control plane components)`,
      { field: `metadata.labels[${CONTROL_PLANE_COMPONENT_LABEL}]` },
    );
  }
  if (pod.spec.hostNetwork === true) {
    throw new InjectError('hostNetwork is enabled: Linkerd cannot inject pods on the host network', {
      field: 'spec.hostNetwork',
    });
  }
  const sidecar = existingSidecar(pod.spec);
  if (sidecar !== undefined) {
    throw new InjectError(
      `pod has a sidecar injected already (container ${sidecar}); Linkerd does not inject next to another proxy`,
      { field: 'spec' },
    );
  }
  if (pod.spec.automountServiceAccountToken === false && !settings.values.serviceAccountTokenProjection) {
    throw new InjectError(
      'automountServiceAccountToken set to "false", with Values.identity.serviceAccountTokenProjection set to "false": the proxy has no token to get its identity with',
      { field: 'spec.automountServiceAccountToken' },
    );
  }
}

/** Inserts `item` into `spec[key]` at `index` (`'-'` appends), creating the list. */
function insert(spec: JsonObject, key: string, index: number | '-', item: JsonObject): void {
  const arr = Array.isArray(spec[key]) ? (spec[key] as JsonObject[]) : [];
  if (index === '-') arr.push(item);
  else arr.splice(index, 0, item);
  spec[key] = arr;
}

/**
 * Injects one pod template (see the module comment). Returns the new pod and the warnings: unknown
 * `config.*linkerd.io/` keys (with the nearest known key), override values Linkerd ignores, UDP ports.
 * @throws InjectError for Linkerd's refusals and for values the chart refuses to render
 */
export function injectLinkerdPod(req: InjectRequest<LinkerdSettings>): { pod: PodTemplate; warnings: string[] } {
  const { settings } = req;
  const pod = withoutPreviousInjection(req.pod);
  refuse(req, pod);

  const podAnn = { ...(pod.metadata.annotations ?? {}) };
  const nsAnn = req.namespace?.annotations ?? {};
  const warnings = podWarnings(req, pod, podAnn, nsAnn);
  const added = addedAnnotations(settings, podAnn);
  const values = cloneJson(settings.values);
  // The run's setting is the values' (loadLinkerdConfig resolves them together); a request with native sidecars
  // on where the values say off is the pipeline's `spec.kindPolicies: native` for this kind.
  if (req.config.nativeSidecars) values.proxy.nativeSidecar = true;
  const ann = effectiveAnnotations(nsAnn, settings.overrideAnnotations, { ...podAnn, ...added });
  const own = effectiveAnnotations(nsAnn, {}, podAnn);
  const configured = Object.hasOwn(own, A.opaquePorts) ? undefined : settings.overrideAnnotations[A.opaquePorts];
  warnings.push(
    ...applyOverrides(
      values,
      configured === undefined ? ann : withoutKey(ann, A.opaquePorts),
      nsAnn,
      podAnn,
      namedPorts(pod.spec),
    ),
  );
  // `linkerd inject --opaque-ports` puts the flag's text into the values as given (names kept next to the
  // numbers: cli/cmd/testdata/inject_emojivoto_deployment_opaque_ports.golden.yml) and writes the annotation;
  // only a pod's or namespace's own annotation is parsed (`ParseContainerOpaquePorts`, named ports resolved).
  if (configured !== undefined) values.proxy.opaquePorts = configured;

  if (!settings.manual) {
    const own = podAnn[INJECT_ANNOTATION];
    if (own !== 'enabled' && own !== 'ingress' && added[INJECT_ANNOTATION] === undefined)
      added[INJECT_ANNOTATION] = values.proxy.isIngress ? 'ingress' : 'enabled';
    setAnnotations(pod, added);
    return { pod, warnings };
  }

  refuseUnrenderable(values);
  // GetPodPatch computes the inbound ports after the overrides: config.linkerd.io/pod-inbound-ports has no effect.
  values.proxy.podInboundPorts = podInboundPorts(pod.spec);
  annotateManual(req, pod, values, added);
  const facts = podFacts(pod.spec, settings.controlPlaneNamespace);
  const debug = debugSidecarEnabled(ann[A.enableDebugSidecar] ?? '', warnings);
  addPatchItems(pod.spec, values, facts, debug);
  return { pod, warnings };
}

/**
 * The pod template without a previous Linkerd injection (the silent `uninject` pass of `linkerd inject`,
 * `./inventory.ts`), keeping the pod's own `linkerd.io/inject` annotation; a copy of `original` when none.
 */
function withoutPreviousInjection(original: PodTemplate): PodTemplate {
  const previous = linkerdInventory(original);
  return previous
    ? removeInventory(original, {
        ...previous,
        annotations: (previous.annotations ?? []).filter((k) => k !== INJECT_ANNOTATION),
      })
    : cloneJson(original);
}

/** Warnings about the pod as found: unknown `config.*linkerd.io/` keys (pod, then namespace) and UDP ports. */
function podWarnings(
  req: InjectRequest<LinkerdSettings>,
  pod: PodTemplate,
  podAnn: Record<string, string>,
  nsAnn: Record<string, string>,
): string[] {
  const warnings = [...unknownConfigKeyWarnings(podAnn, 'pod annotation')];
  if (req.namespace) warnings.push(...unknownConfigKeyWarnings(nsAnn, `namespace ${req.namespace.name} annotation`));
  if (list(pod.spec.containers).some((c) => list(c.ports).some((p) => p.protocol === 'UDP'))) {
    warnings.push(
      'a container port uses protocol: UDP; Linkerd does not proxy UDP traffic (it passes through unmeshed)',
    );
  }
  return warnings;
}

/**
 * The annotations `linkerd inject` adds to the pod: the configured override annotations the pod does not
 * set itself, and `config.linkerd.io/enable-debug-sidecar: true` for `debugSidecar`.
 */
function addedAnnotations(settings: LinkerdSettings, podAnn: Record<string, string>): Record<string, string> {
  const added: Record<string, string> = {};
  for (const [k, v] of Object.entries(settings.overrideAnnotations)) if (!Object.hasOwn(podAnn, k)) setOwn(added, k, v);
  if (settings.debugSidecar && !Object.hasOwn(podAnn, A.enableDebugSidecar)) added[A.enableDebugSidecar] = 'true';
  return added;
}

/** Merges `extra` into the pod's annotations (later keys win). */
function setAnnotations(pod: PodTemplate, extra: Record<string, string>): void {
  pod.metadata.annotations = { ...(pod.metadata.annotations ?? {}), ...extra };
}

/**
 * The values Linkerd refuses when it renders the proxy patch: `proxy.logHTTPHeaders` and the
 * `clusterNetworks` list.
 * @throws InjectError for `logHTTPHeaders` other than insecure/off, or a `clusterNetworks` entry that is not a CIDR
 */
function refuseUnrenderable(values: LinkerdValues): void {
  if (!['insecure', 'off', ''].includes(values.proxy.logHTTPHeaders)) {
    throw new InjectError(
      `${A.logHttpHeaders} (or values proxy.logHTTPHeaders) must be insecure or off; got "${values.proxy.logHTTPHeaders}"`,
      { field: `metadata.annotations[${A.logHttpHeaders}]` },
    );
  }
  // Linkerd GetPodPatch (pkg/inject/inject.go): the value trimmed of commas at both ends, then net.ParseCIDR of
  // every entry between commas (an empty one too), unless the value is empty.
  if (values.clusterNetworks === '') return;
  for (const net of trimCommas(values.clusterNetworks).split(',')) {
    const cidr = parseCIDR(net);
    if (!cidr.ok)
      throw new InjectError(`cannot parse destination get networks: ${cidr.error} (values clusterNetworks)`);
  }
}

/** Go `strings.Trim(s, ",")`. */
function trimCommas(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && s[a] === ',') a++;
  while (b > a && s[b - 1] === ',') b--;
  return s.slice(a, b);
}

/**
 * With `manual`: the `added` annotations plus `linkerd.io/created-by`, `linkerd.io/proxy-version` and
 * `linkerd.io/trust-root-sha256` (hex SHA-256 of the trust anchors PEM), and the labels
 * `linkerd.io/control-plane-ns`, the workload kind's label (e.g. `linkerd.io/proxy-deployment`) and
 * `linkerd.io/workload-ns` (empty when the namespace was defaulted), as `GetPodPatch` writes them.
 */
function annotateManual(
  req: InjectRequest<LinkerdSettings>,
  pod: PodTemplate,
  values: LinkerdValues,
  added: Record<string, string>,
): void {
  const { settings, workload } = req;
  const kindLabel = LINKERD_KINDS[workload.kind];
  added[CREATED_BY_ANNOTATION] = settings.createdBy;
  added[PROXY_VERSION_ANNOTATION] = values.proxy.image.version || values.linkerdVersion;
  added[TRUST_ROOT_SHA_ANNOTATION] = createHash('sha256').update(values.identityTrustAnchorsPEM).digest('hex');
  setAnnotations(pod, added);
  pod.metadata.labels = {
    ...(pod.metadata.labels ?? {}),
    [CONTROL_PLANE_NS_LABEL]: settings.controlPlaneNamespace,
    ...(kindLabel ? { [kindLabel]: workload.name } : {}),
    [WORKLOAD_NS_LABEL]: workload.namespaceDefaulted ? '' : workload.namespace,
  };
}

/** `config.linkerd.io/enable-debug-sidecar` read with Go `strconv.ParseBool`; another value is false, with a warning. */
function debugSidecarEnabled(value: string, warnings: string[]): boolean {
  const debug = /^(1|t|T|TRUE|true|True)$/.test(value);
  if (value !== '' && !debug && !/^(0|f|F|FALSE|false|False)$/.test(value)) {
    warnings.push(`annotation ${A.enableDebugSidecar}: "${value}" is not a boolean; Linkerd ignores it`);
  }
  return debug;
}

/**
 * Adds the items of charts/patch/templates/patch.json at its positions: the xtables volume and proxy-init
 * container (or, with CNI, the network validator), first among init containers for a native sidecar, else
 * last; the debug container; the identity volumes; the proxy (after the init container when native, else
 * first container with `await`, else last).
 * @throws InjectError when the init container's values cannot be rendered
 */
function addPatchItems(spec: JsonObject, values: LinkerdValues, facts: PodFacts, debug: boolean): void {
  const native = values.proxy.nativeSidecar;
  let initIndex: number | '-' = native ? 0 : '-';
  try {
    if (!values.cniEnabled) {
      insert(spec, 'volumes', '-', { emptyDir: {}, name: XTABLES_VOLUME });
      insert(spec, 'initContainers', initIndex, proxyInitContainer(values, facts));
    } else {
      insert(spec, 'initContainers', initIndex, networkValidatorContainer(values));
    }
  } catch (e) {
    throw new InjectError(`values: ${(e as Error).message}`);
  }
  if (initIndex !== '-') initIndex += 1;
  if (debug) insert(spec, 'containers', '-', debugContainer(values));
  for (const vol of identityVolumes(values)) insert(spec, 'volumes', '-', vol);
  const proxy = proxyContainer(values, facts);
  if (native) insert(spec, 'initContainers', initIndex, proxy);
  else insert(spec, 'containers', values.proxy.await ? 0 : '-', proxy);
}

/** `map` without `key` (a copy). */
function withoutKey(map: Record<string, string>, key: string): Record<string, string> {
  const out = { ...map };
  delete out[key];
  return out;
}
