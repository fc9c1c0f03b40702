/**
 * One Linkerd injection, the way `linkerd inject` does it (cli/cmd/inject.go `uninjectAndInject` +
 * `resourceTransformerInject.transform`, pkg/inject/inject.go `GetPodPatch`, charts/patch/templates/patch.json):
 * 1. strip a previous Linkerd injection (the silent `uninject` pass; `./inventory.ts`), keeping the pod's
 *    own `linkerd.io/inject` annotation;
 * 2. refuse what Linkerd refuses (`Report.Injectable` / `ThrowInjectError`): host network, another mesh's
 *    sidecar, `automountServiceAccountToken: false` without token projection, a kind `linkerd inject` does
 *    not handle, a control-plane component without `manual`;
 * 3. annotate: the override annotations, `linkerd.io/inject: enabled` (annotation-only mode) or, with
 *    `manual`, `linkerd.io/created-by`, `linkerd.io/proxy-version`, `linkerd.io/trust-root-sha256` and the labels;
 * 4. with `manual`: the per-pod values (namespace, override and pod `config.linkerd.io/*` annotations), then
 *    the init container (or the CNI network validator), the debug container, the volumes and the proxy, at
 *    the positions patch.json adds them.
 */
import { createHash } from 'node:crypto';
import type { JsonObject, PodTemplate } from '../../model.ts';
import { InjectError } from '../../results/errors.ts';
import type { InjectRequest } from '../driver.ts';
import {
  A, CONTROL_PLANE_COMPONENT_LABEL, CONTROL_PLANE_NS_LABEL, CREATED_BY_ANNOTATION, INJECT_ANNOTATION, LINKERD_KINDS,
  PROXY_VERSION_ANNOTATION, TRUST_ROOT_SHA_ANNOTATION, unknownConfigKeyWarnings, WORKLOAD_NS_LABEL, XTABLES_VOLUME,
} from './annotations.ts';
import type { LinkerdSettings } from './config.ts';
import { debugContainer, identityVolumes, networkValidatorContainer, proxyContainer, proxyInitContainer, type PodFacts } from './containers.ts';
import { linkerdInventory, removeInventory } from './inventory.ts';
import { applyOverrides, effectiveAnnotations } from './overrides.ts';

type Container = JsonObject & { name?: string; image?: string };

const list = (v: unknown): Container[] => (Array.isArray(v) ? (v as Container[]) : []);

/** Linkerd `HasExistingSidecars` (pkg/healthcheck/sidecar.go): a Linkerd or Istio proxy or init container by name or image. */
export function existingSidecar(spec: JsonObject): string | undefined {
  const inits = list(spec.initContainers);
  for (const c of [...inits, ...list(spec.containers)]) {
    const image = typeof c.image === 'string' ? c.image : '';
    if (image.startsWith('cr.l5d.io/linkerd/proxy:') || image.startsWith('gcr.io/istio-release/proxyv2:') || c.name === 'linkerd-proxy' || c.name === 'istio-proxy') return String(c.name);
  }
  for (const c of inits) {
    const image = typeof c.image === 'string' ? c.image : '';
    if (image.startsWith('cr.l5d.io/linkerd/proxy-init:') || image.startsWith('gcr.io/istio-release/proxy_init:') || c.name === 'linkerd-init' || c.name === 'istio-init') return String(c.name);
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
    for (const p of list(c.ports)) if (typeof p.name === 'string' && p.name !== '' && typeof p.containerPort === 'number') out.set(p.name, p.containerPort);
  }
  return out;
}

/** What the first app container contributes (Linkerd `injectPodSpec`, `serviceAccountVolumeMount`). */
function podFacts(spec: JsonObject, controlPlaneNamespace: string): PodFacts {
  const first = list(spec.containers)[0];
  const facts: PodFacts = { controlPlaneNamespace };
  const caps = (first?.securityContext as { capabilities?: { add?: unknown; drop?: unknown } } | undefined)?.capabilities;
  if (caps && typeof caps === 'object') {
    const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
    facts.capabilities = { add: strings(caps.add), drop: strings(caps.drop) };
  }
  const sa = list(first?.volumeMounts).find((m) => m.mountPath === '/var/run/secrets/kubernetes.io/serviceaccount');
  if (sa && typeof sa.name === 'string') facts.saMount = { name: sa.name, mountPath: String(sa.mountPath), readOnly: sa.readOnly === true };
  return facts;
}

/** The refusals of `linkerd inject` for a pod template already stripped of a previous Linkerd injection. */
function refuse(req: InjectRequest<LinkerdSettings>, pod: PodTemplate): void {
  const { settings, workload } = req;
  if (!Object.hasOwn(LINKERD_KINDS, workload.kind)) {
    throw new InjectError(`linkerd inject does not handle kind ${workload.kind} (supported: ${Object.keys(LINKERD_KINDS).join(', ')}); annotate its pod template with linkerd.io/inject yourself if Linkerd's proxy injector should inject its pods`);
  }
  if (!settings.manual && Object.hasOwn(pod.metadata.labels ?? {}, CONTROL_PLANE_COMPONENT_LABEL)) {
    throw new InjectError(`spec.linkerd.manual must be set when injecting control plane components (pod label ${CONTROL_PLANE_COMPONENT_LABEL}; linkerd: --manual must be set when injecting control plane components)`, { field: `metadata.labels[${CONTROL_PLANE_COMPONENT_LABEL}]` });
  }
  if (pod.spec.hostNetwork === true) {
    throw new InjectError('hostNetwork is enabled: Linkerd cannot inject pods on the host network', { field: 'spec.hostNetwork' });
  }
  const sidecar = existingSidecar(pod.spec);
  if (sidecar !== undefined) {
    throw new InjectError(`pod has a sidecar injected already (container ${sidecar}); Linkerd does not inject next to another proxy`, { field: 'spec' });
  }
  if (pod.spec.automountServiceAccountToken === false && !settings.values.serviceAccountTokenProjection) {
    throw new InjectError('automountServiceAccountToken set to "false", with Values.identity.serviceAccountTokenProjection set to "false": the proxy has no token to get its identity with', { field: 'spec.automountServiceAccountToken' });
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
  const { settings, workload } = req;
  const warnings: string[] = [];
  const original = req.pod;
  const previous = linkerdInventory(original);
  const stripped = previous
    ? removeInventory(original, { ...previous, annotations: (previous.annotations ?? []).filter((k) => k !== INJECT_ANNOTATION) })
    : structuredClone(original);
  const kindLabel = LINKERD_KINDS[workload.kind];
  refuse(req, stripped);

  const podAnn = { ...(stripped.metadata.annotations ?? {}) };
  const nsAnn = req.namespace?.annotations ?? {};
  warnings.push(...unknownConfigKeyWarnings(podAnn, 'pod annotation'));
  if (req.namespace) warnings.push(...unknownConfigKeyWarnings(nsAnn, `namespace ${req.namespace.name} annotation`));
  if (list(stripped.spec.containers).some((c) => list(c.ports).some((p) => p.protocol === 'UDP'))) {
    warnings.push('a container port uses protocol: UDP; Linkerd does not proxy UDP traffic (it passes through unmeshed)');
  }

  const added: Record<string, string> = {};
  for (const [k, v] of Object.entries(settings.overrideAnnotations)) if (!Object.hasOwn(podAnn, k)) added[k] = v;
  if (settings.debugSidecar && !Object.hasOwn(podAnn, A.enableDebugSidecar)) added[A.enableDebugSidecar] = 'true';
  const pod = stripped;
  const setAnnotations = (extra: Record<string, string>) => {
    pod.metadata.annotations = { ...(pod.metadata.annotations ?? {}), ...extra };
  };

  const values = structuredClone(settings.values);
  const ann = effectiveAnnotations(nsAnn, settings.overrideAnnotations, { ...podAnn, ...added });
  warnings.push(...applyOverrides(values, ann, nsAnn, podAnn, namedPorts(pod.spec)));

  if (!settings.manual) {
    const own = podAnn[INJECT_ANNOTATION];
    if (own !== 'enabled' && own !== 'ingress' && added[INJECT_ANNOTATION] === undefined) added[INJECT_ANNOTATION] = values.proxy.isIngress ? 'ingress' : 'enabled';
    setAnnotations(added);
    return { pod, warnings };
  }

  if (!['insecure', 'off', ''].includes(values.proxy.logHTTPHeaders)) {
    throw new InjectError(`${A.logHttpHeaders} (or values proxy.logHTTPHeaders) must be insecure or off; got "${values.proxy.logHTTPHeaders}"`, { field: `metadata.annotations[${A.logHttpHeaders}]` });
  }
  for (const net of values.clusterNetworks.replace(/^,+|,+$/g, '').split(',').filter((n) => n !== '')) {
    if (!/^[0-9a-fA-F:.]+\/\d{1,3}$/.test(net)) throw new InjectError(`cannot parse destination get networks: clusterNetworks entry "${net}" is not a CIDR`);
  }
  // GetPodPatch computes the inbound ports after the overrides: config.linkerd.io/pod-inbound-ports has no effect.
  values.proxy.podInboundPorts = podInboundPorts(pod.spec);

  added[CREATED_BY_ANNOTATION] = settings.createdBy;
  added[PROXY_VERSION_ANNOTATION] = values.proxy.image.version || values.linkerdVersion;
  added[TRUST_ROOT_SHA_ANNOTATION] = createHash('sha256').update(values.identityTrustAnchorsPEM).digest('hex');
  setAnnotations(added);
  pod.metadata.labels = {
    ...(pod.metadata.labels ?? {}),
    [CONTROL_PLANE_NS_LABEL]: settings.controlPlaneNamespace,
    ...(kindLabel ? { [kindLabel]: workload.name } : {}),
    [WORKLOAD_NS_LABEL]: workload.namespaceDefaulted ? '' : workload.namespace,
  };

  const facts = podFacts(pod.spec, settings.controlPlaneNamespace);
  const debugValue = ann[A.enableDebugSidecar] ?? '';
  const debug = /^(1|t|T|TRUE|true|True)$/.test(debugValue);
  if (debugValue !== '' && !debug && !/^(0|f|F|FALSE|false|False)$/.test(debugValue)) {
    warnings.push(`annotation ${A.enableDebugSidecar}: "${debugValue}" is not a boolean; Linkerd ignores it`);
  }
  const native = values.proxy.nativeSidecar;
  let initIndex: number | '-' = native ? 0 : '-';
  const spec = pod.spec;
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
  return { pod, warnings };
}
