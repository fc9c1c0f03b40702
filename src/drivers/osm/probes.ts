/**
 * Health probe rewrite of the OSM family, so that the kubelet's probes pass through the sidecar:
 * - `per-container` (OSM v1.2.4 `rewriteHealthProbes`, pkg/injector/health_probes.go): an HTTP probe goes to
 *   `:15901/osm-liveness-probe/<container>` (readiness 15902, startup 15903); an HTTPS probe keeps its path and
 *   gets the port only; a TCP probe becomes an HTTP GET `:15904/osm-healthcheck` with header
 *   `Original-Tcp-Port`, served by the added healthcheck container.
 * - `healthcheck-path` (osm-edge/FSM `RewriteHealthProbes`): every HTTP(S) probe goes to
 *   `:1590x<healthcheckPath>`, HTTP ones with headers `Original-Http-Port`/`Original-Http-Path`, HTTPS ones
 *   switched to HTTP with `Original-Tcp-Port`; TCP probes as above.
 * The original probes are returned so that the status annotation keeps them (the mesh hands them to the
 * bootstrap config; uninject and re-injection restore them). Exec and gRPC probes are left alone.
 */
import type { Json, JsonObject } from '../../model.ts';
import { InjectError } from '../../results/errors.ts';
import { PORTS, type Flavor, type ProbeStyle } from './flavor.ts';
import { isJsonObject, setOwn } from '../../json.ts';
import { declaredPorts, type PortRule, resolveNamedPort } from '../kit/ports.ts';

/** The probe fields, in the order OSM rewrites them, with their sidecar port and OSM path stem. */
const KINDS = [
  { field: 'livenessProbe', port: PORTS.liveness, stem: 'liveness' },
  { field: 'readinessProbe', port: PORTS.readiness, stem: 'readiness' },
  { field: 'startupProbe', port: PORTS.startup, stem: 'startup' },
] as const;

export type ProbeField = (typeof KINDS)[number]['field'];

/** One rewritten probe: the container, which probe, and the probe as the user wrote it. */
export interface OriginalProbe {
  container: string;
  probe: ProbeField;
  original: JsonObject;
}

/** What the rewrite did: the originals, which probe kinds the sidecar must listen for, and whether the healthcheck container is needed. */
export interface ProbeRewrite {
  originals: OriginalProbe[];
  uses: Record<ProbeField, boolean>;
  usesTcp: boolean;
}

/**
 * How the OSM family resolves a probe's port (k8s `IntOrString.IntValue()`, else the container port of that
 * name; pkg/injector/health_probes.go `getPort`: `int32(IntValue())`, strconv.Atoi's value with its error
 * dropped, 0 meaning "a name"): a number as is, else the first declared port of that name.
 */
export const OSM_PROBE_PORTS: PortRule = {
  order: 'number-first',
  number: 'go-int32-value',
  name: 'non-empty-string',
  declared: 'first-number',
};

/** `obj` with key `from` replaced by `to` at the same position. */
function renameKey(obj: JsonObject, from: string, to: string, value: Json): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(obj)) {
    if (k === from) out[to] = value;
    else setOwn(out, k, v);
  }
  return out;
}

/**
 * Rewrites the probes of `spec.containers` in place (before the sidecar is added) per `style`.
 * @throws InjectError when a TCP probe (or, for `healthcheck-path`, any HTTP probe) names a port the
 *   container does not declare: the mesh would write port 0 (or 80/443) into a header; refused instead
 */
export function rewriteProbes(containers: JsonObject[], style: ProbeStyle, flavor: Flavor): ProbeRewrite {
  const out: ProbeRewrite = {
    originals: [],
    uses: { livenessProbe: false, readinessProbe: false, startupProbe: false },
    usesTcp: false,
  };
  // healthcheck-path: one aggregate per kind, the last container's probe wins (osm-edge/FSM `HealthProbes`).
  const lastTcp: Record<ProbeField, boolean> = { livenessProbe: false, readinessProbe: false, startupProbe: false };
  containers.forEach((c, ci) => {
    const name = typeof c.name === 'string' ? c.name : '';
    for (const kind of KINDS) {
      const probe = c[kind.field];
      if (!isJsonObject(probe)) continue;
      const at = `spec.containers[${ci}].${kind.field}`;
      // The record keeps the probe's data, not how it was written (its keys sorted): two documents of the same
      // content written in two key orders get one record (src/krm/identity.ts); uninject takes the order back
      // from the probe it restores (`inOrderOf`).
      const original = sortedDeep(probe) as JsonObject;
      const unresolved = (field: string, port: Json | undefined) =>
        new InjectError(
          `${at}.${field}.port ${JSON.stringify(port)} names no port of container ${name}: ${flavor.title} would write port 0 into the probe's Original-* header; declare the port or use its number`,
          { field: `${at}.${field}.port` },
        );
      let isTcp: boolean;
      let rewritten: JsonObject;
      if (isJsonObject(probe.httpGet)) {
        const get: JsonObject = { ...probe.httpGet };
        const scheme = typeof get.scheme === 'string' ? get.scheme : '';
        const isHttp = scheme === '' || scheme === 'HTTP';
        const port = resolveNamedPort(get.port, declaredPorts(c), OSM_PROBE_PORTS);
        if (style === 'per-container') {
          isTcp = false;
          if (isHttp) get.path = `/osm-${kind.stem}-probe/${name}`;
        } else {
          isTcp = scheme === 'HTTPS';
          const originalPath = typeof get.path === 'string' ? get.path : '';
          get.path = flavor.healthcheckPath;
          if (port === undefined && (isHttp || isTcp)) throw unresolved('httpGet', get.port);
          const headers = Array.isArray(get.httpHeaders) ? [...get.httpHeaders] : [];
          if (isTcp) {
            get.scheme = 'HTTP';
            headers.push({ name: 'Original-Tcp-Port', value: String(port) });
          } else if (isHttp) {
            headers.push(
              { name: 'Original-Http-Port', value: String(port) },
              { name: 'Original-Http-Path', value: originalPath },
            );
          }
          get.httpHeaders = headers;
        }
        get.port = kind.port;
        rewritten = { ...probe, httpGet: get };
      } else if (isJsonObject(probe.tcpSocket)) {
        isTcp = true;
        const port = resolveNamedPort(probe.tcpSocket.port, declaredPorts(c), OSM_PROBE_PORTS);
        if (port === undefined) throw unresolved('tcpSocket', probe.tcpSocket.port);
        const get: JsonObject = {
          path: flavor.healthcheckPath,
          port: PORTS.healthcheck,
          httpHeaders: [{ name: 'Original-Tcp-Port', value: String(port) }],
        };
        rewritten = renameKey(probe, 'tcpSocket', 'httpGet', get);
      } else {
        continue;
      }
      c[kind.field] = rewritten;
      out.originals.push({ container: name, probe: kind.field, original });
      out.uses[kind.field] = true;
      if (style === 'per-container') out.usesTcp ||= isTcp;
      else lastTcp[kind.field] = isTcp;
    }
  });
  if (style === 'healthcheck-path') out.usesTcp = Object.values(lastTcp).some(Boolean);
  return out;
}

/** A copy of `v` with every map's keys sorted (UTF-16 order), at any depth. */
function sortedDeep(v: Json): Json {
  if (Array.isArray(v)) return v.map(sortedDeep);
  if (!isJsonObject(v)) return v;
  const out: JsonObject = {};
  for (const k of Object.keys(v).sort()) setOwn(out, k, sortedDeep(v[k] as Json));
  return out;
}

/**
 * A copy of `v` (a recorded original) with each map's keys in the order `like` (the probe as found, which the
 * rewrite changed in place) has them, the keys `like` lacks after them; at any depth, lists entry by entry. The
 * `httpGet` that replaced a `tcpSocket` stands in its place.
 */
function inOrderOf(v: Json, like: Json | undefined): Json {
  if (Array.isArray(v)) return v.map((x, i) => inOrderOf(x, Array.isArray(like) ? like[i] : undefined));
  if (!isJsonObject(v)) return v;
  const out: JsonObject = {};
  const ref = isJsonObject(like) ? like : {};
  for (const k of Object.keys(ref)) {
    const own = k === 'httpGet' && !Object.hasOwn(v, k) && Object.hasOwn(v, 'tcpSocket') ? 'tcpSocket' : k;
    if (Object.hasOwn(v, own) && !Object.hasOwn(out, own)) setOwn(out, own, inOrderOf(v[own] as Json, ref[k]));
  }
  for (const k of Object.keys(v)) if (!Object.hasOwn(out, k)) setOwn(out, k, inOrderOf(v[k] as Json, undefined));
  return out;
}

/**
 * Puts the original probes back (uninject, and re-injection before rewriting again). A container that is
 * gone is skipped; a probe the user changed since is overwritten with the recorded original only when its
 * current form is still a rewritten one (`httpGet.port` one of the sidecar's probe ports), else left as is.
 */
export function restoreProbes(containers: JsonObject[], originals: readonly OriginalProbe[]): void {
  const rewrittenPorts = new Set<Json>([PORTS.liveness, PORTS.readiness, PORTS.startup, PORTS.healthcheck]);
  for (const o of originals) {
    const c = containers.find((x) => x.name === o.container);
    if (!c) continue;
    const current = c[o.probe];
    if (isJsonObject(current) && isJsonObject(current.httpGet) && rewrittenPorts.has(current.httpGet.port ?? null))
      c[o.probe] = inOrderOf(o.original, current) as JsonObject;
  }
}
