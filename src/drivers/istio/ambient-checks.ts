/**
 * The Istio driver's findings about a package moving to ambient (`MeshDriver.packageFindings`): warnings in an
 * injection, errors in a check. Each rule has its own name (`AMBIENT_FINDINGS`).
 *
 * Sources: istio/istio `cni/README.md` (which pods ztunnel serves; a sidecar takes precedence), Istio's "Migrate
 * from Sidecar to Ambient" guide (istio.io/latest/docs/ambient/migrate/: an L7 `AuthorizationPolicy` with a pod
 * `selector` is not enforced in ambient, it must target a waypoint with `targetRefs`; a namespace moves by
 * `istio.io/use-waypoint`, `istio.io/dataplane-mode=ambient`, then the injection labels removed).
 */
import { isJsonObject, stringsAt } from '../../json.ts';
import type { Json, JsonObject, NamespaceInfo, ResourceId } from '../../model.ts';
import { matchesSelector } from '../../selection/label-selector.ts';
import { NS_NAME_LABEL } from '../../selection/policy.ts';
import type {
  PackageFinding,
  PackageResource,
  PackageView,
  PackageWorkload,
  ReasonInfo,
} from '../../contract/driver.ts';
import {
  DATAPLANE_LABEL,
  labelsEnrol,
  namespaceEnrolled,
  USE_WAYPOINT_LABEL,
  USE_WAYPOINT_NAMESPACE_LABEL,
} from './ambient.ts';
import { NS_INJECTION_LABEL, REV_LABEL } from './webhook.ts';

/** The rules of `ambientFindings`, as data (SARIF rule descriptions). */
export const AMBIENT_FINDINGS: Readonly<Record<string, ReasonInfo>> = {
  'ambient-sidecar': {
    description:
      'a workload ambient-enrolled by its labels carries an Istio sidecar, which takes precedence over ztunnel',
  },
  'ambient-injection-label': {
    description: 'a namespace carries both istio.io/dataplane-mode=ambient and a sidecar injection label',
  },
  'ambient-l7-policy': {
    description:
      'an L7 AuthorizationPolicy selects ambient pods with a selector: not enforced without a waypoint (targetRefs)',
  },
  'waypoint-missing': { description: 'istio.io/use-waypoint names a waypoint Gateway the package does not hold' },
};

/** The kinds `ambientFindings` reads besides workloads. */
export const AMBIENT_PACKAGE_KINDS: readonly string[] = ['Namespace', 'Service', 'AuthorizationPolicy', 'Gateway'];

const str = (v: Json | undefined): string | undefined => (typeof v === 'string' ? v : undefined);

/** The namespace labels as a webhook or node agent sees them. */
function labelsOf(namespaces: ReadonlyMap<string, NamespaceInfo>, ns: string): Record<string, string> {
  return { ...(namespaces.get(ns)?.labels ?? {}), [NS_NAME_LABEL]: ns };
}

/** A namespace's identity: its Namespace object in the package, else a reference without a file (`spec.namespaces`). */
function namespaceId(resources: readonly PackageResource[], name: string): ResourceId {
  return (
    resources.find((r) => r.value.kind === 'Namespace' && r.id.name === name)?.id ?? {
      apiVersion: 'v1',
      kind: 'Namespace',
      name,
    }
  );
}

/**
 * Every finding of the package, in rule order: `ambient-injection-label` per namespace, `ambient-sidecar` per
 * workload, `ambient-l7-policy` per AuthorizationPolicy, `waypoint-missing` per resource naming a waypoint.
 */
export function ambientFindings(pkg: PackageView): PackageFinding[] {
  return [
    ...injectionLabelFindings(pkg),
    ...pkg.workloads.flatMap((w) => sidecarFinding(w, pkg)),
    ...pkg.resources.flatMap((r) => l7PolicyFinding(r, pkg)),
    ...waypointFindings(pkg),
  ];
}

/** `ambient-injection-label`: a namespace labelled ambient that an injection label still selects for sidecars. */
function injectionLabelFindings(pkg: PackageView): PackageFinding[] {
  const out: PackageFinding[] = [];
  for (const [name, info] of pkg.namespaces) {
    if (!namespaceEnrolled(info.labels)) continue;
    const injection =
      info.labels[NS_INJECTION_LABEL] === 'enabled'
        ? `${NS_INJECTION_LABEL}=enabled`
        : info.labels[REV_LABEL] !== undefined
          ? `${REV_LABEL}=${info.labels[REV_LABEL]}`
          : undefined;
    if (injection === undefined) continue;
    out.push({
      rule: 'ambient-injection-label',
      id: namespaceId(pkg.resources, name),
      field: 'metadata.labels',
      message: `namespace ${name} carries both ${DATAPLANE_LABEL}=ambient and ${injection}: new pods get sidecars, which take precedence over ztunnel; remove ${injection} to finish the move to ambient (meshinject migrate --to ambient), or remove ${DATAPLANE_LABEL} to stay on sidecars`,
    });
  }
  return out;
}

/** `ambient-sidecar`: a workload that its labels enrol in ambient and that carries a sidecar as written. */
function sidecarFinding(w: PackageWorkload, pkg: PackageView): PackageFinding[] {
  if (!w.injected || !labelsEnrol(w.podLabels, labelsOf(pkg.namespaces, w.namespace))) return [];
  const by =
    w.podLabels[DATAPLANE_LABEL] === 'ambient'
      ? `its pod label ${DATAPLANE_LABEL}=ambient`
      : `namespace ${w.namespace} (${DATAPLANE_LABEL}=ambient)`;
  return [
    {
      rule: 'ambient-sidecar',
      id: w.id,
      message: `it carries an Istio sidecar, though ${by} enrols it in ambient: the sidecar takes precedence and ztunnel skips the pod; set spec.istio.ambient: prefer to leave it to ztunnel, or label the pod ${DATAPLANE_LABEL}=none to keep the sidecar on purpose`,
    },
  ];
}

/** The L7 attributes of an AuthorizationPolicy's rules (HTTP methods, paths, hosts, headers, request principals), as field names. */
export function l7Attributes(spec: JsonObject): string[] {
  const found = new Set<string>();
  const rules = Array.isArray(spec.rules) ? spec.rules : [];
  for (const rule of rules) {
    if (!isJsonObject(rule)) continue;
    for (const to of Array.isArray(rule.to) ? rule.to : []) {
      const op = isJsonObject(to) ? to.operation : undefined;
      if (isJsonObject(op))
        for (const k of ['methods', 'notMethods', 'paths', 'notPaths', 'hosts', 'notHosts'])
          if (op[k] !== undefined) found.add(`operation.${k}`);
    }
    for (const from of Array.isArray(rule.from) ? rule.from : []) {
      const src = isJsonObject(from) ? from.source : undefined;
      if (isJsonObject(src))
        for (const k of ['requestPrincipals', 'notRequestPrincipals'])
          if (src[k] !== undefined) found.add(`source.${k}`);
    }
    for (const when of Array.isArray(rule.when) ? rule.when : []) {
      const key = isJsonObject(when) ? str(when.key) : undefined;
      if (key?.startsWith('request.')) found.add(`when ${key}`);
    }
  }
  return [...found];
}

/**
 * `ambient-l7-policy`: an `AuthorizationPolicy` (security.istio.io) in a namespace labelled ambient, with a pod
 * `selector` and L7 rules (`l7Attributes`), unless every workload of the package it selects carries a sidecar.
 */
function l7PolicyFinding(r: PackageResource, pkg: PackageView): PackageFinding[] {
  const v = r.value;
  if (v.kind !== 'AuthorizationPolicy' || !str(v.apiVersion)?.startsWith('security.istio.io/')) return [];
  const spec = isJsonObject(v.spec) ? v.spec : {};
  const ns = r.id.namespace ?? pkg.config.defaultNamespace;
  if (!isJsonObject(spec.selector) || !namespaceEnrolled(labelsOf(pkg.namespaces, ns))) return [];
  const l7 = l7Attributes(spec);
  if (l7.length === 0) return [];
  const matchLabels = stringsAt(spec, ['selector', 'matchLabels']);
  const selected = pkg.workloads.filter((w) => w.namespace === ns && matchesSelector({ matchLabels }, w.podLabels));
  if (selected.length > 0 && selected.every((w) => w.tags.dataplane === 'sidecar')) return [];
  return [
    {
      rule: 'ambient-l7-policy',
      id: r.id,
      field: 'spec.selector',
      message: `it selects pods of namespace ${ns}, which is labelled ${DATAPLANE_LABEL}=ambient, with a selector and has L7 rules (${l7.join(', ')}): ztunnel enforces only L4, so these rules have no effect; attach it to a waypoint with targetRefs (kind Gateway or Service) instead of selector`,
    },
  ];
}

/** A resource or workload naming a waypoint (`istio.io/use-waypoint`), with its namespace and where. */
interface WaypointUse {
  id: ResourceId;
  field?: string;
  what: string;
  labels: Record<string, string>;
  namespace: string;
}

/** `waypoint-missing`: `istio.io/use-waypoint` naming a waypoint `Gateway` (gateway.networking.k8s.io) not in the package. */
function waypointFindings(pkg: PackageView): PackageFinding[] {
  const gateways = new Set(
    pkg.resources
      .filter((r) => r.value.kind === 'Gateway' && str(r.value.apiVersion)?.startsWith('gateway.networking.k8s.io/'))
      .map((r) => `${r.id.namespace ?? pkg.config.defaultNamespace}/${r.id.name}`),
  );
  const uses: WaypointUse[] = [
    ...[...pkg.namespaces].map(([name, info]) => ({
      id: namespaceId(pkg.resources, name),
      field: 'metadata.labels',
      what: `namespace ${name}`,
      labels: info.labels,
      namespace: name,
    })),
    ...pkg.resources
      .filter((r) => r.value.kind === 'Service')
      .map((r) => {
        const namespace = r.id.namespace ?? pkg.config.defaultNamespace;
        return {
          id: r.id,
          field: 'metadata.labels',
          what: `Service ${namespace}/${r.id.name}`,
          labels: stringsAt(r.value, ['metadata', 'labels']),
          namespace,
        };
      }),
    ...pkg.workloads.map((w) => ({ id: w.id, what: 'its pod', labels: w.podLabels, namespace: w.namespace })),
  ];
  const out: PackageFinding[] = [];
  for (const u of uses) {
    const name = u.labels[USE_WAYPOINT_LABEL];
    if (name === undefined || name === '' || name === 'none') continue;
    const ns = u.labels[USE_WAYPOINT_NAMESPACE_LABEL] || u.namespace;
    if (gateways.has(`${ns}/${name}`)) continue;
    out.push({
      rule: 'waypoint-missing',
      id: u.id,
      ...(u.field ? { field: u.field } : {}),
      message: `${u.what} is labelled ${USE_WAYPOINT_LABEL}=${name}, but the package holds no waypoint Gateway ${ns}/${name} (gatewayClassName istio-waypoint): add it (meshinject migrate --to ambient --waypoint ${name}), or check that it is applied from elsewhere`,
    });
  }
  return out;
}
