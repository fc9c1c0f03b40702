/**
 * Named-port resolution of the driver kit: a probe's or hook's `port` (a Kubernetes `IntOrString`) read as a
 * number, a name looked up in the container's declared `ports`. The meshes read it each in their own way, and
 * each reading is kept as the mesh's source has it, as data ({@link PortRule}):
 * - Istio (`ISTIO_PROBE_PORTS` in src/drivers/istio/probes.ts; pkg/kube/inject/app_probe.go): a number as is,
 *   a string only as a declared name (the last port of that name);
 * - OSM and FSM (pkg/injector/health_probes.go, `int32(IntOrString.IntValue())`): a number first, then the name;
 * - Kuma (pkg/plugins/runtime/k8s/probes, `IntValue()` then `String()` against the port names): as OSM's, with
 *   Go's `strconv.Atoi` and a zero value read as "no number".
 */
import { isJsonObject } from '../../json.ts';
import type { Json, JsonObject } from '../../model.ts';
import { atoi, atoiIgnoringError, toInt32 } from '../go-parse.ts';

/** How one mesh resolves a port against a container's declared ports. */
export interface PortRule {
  /** `name-first`: a declared name wins over the number reading (Istio); `number-first`: `IntValue()` first. */
  order: 'name-first' | 'number-first';
  /**
   * How the port reads as a number (undefined: no number):
   * - `json-only`: a JSON number as is; a string is never a number (Istio);
   * - `go-int32-value`: a JSON number as is; a string as Go `int32(IntValue())` (strconv.Atoi, its error
   *   dropped, cut to 32 bits), 0 read as no number (OSM);
   * - `go-int-value`: Go `IntOrString.IntValue()` ({@link intOrStringValue}), 0 read as no number (Kuma).
   */
  number: 'json-only' | 'go-int32-value' | 'go-int-value';
  /**
   * The name a port is looked up by: `non-empty-string` (a string port that is not empty: Istio, OSM),
   * `int-or-string` (Go `IntOrString.String()`: a number's text too, non-empty: Kuma).
   */
  name: 'non-empty-string' | 'int-or-string';
  /**
   * What a declared port of that name yields: `last-number` (the last of that name whose `containerPort` is a
   * number: Istio builds a map of names), `first-number` (the first of that name: its `containerPort` when a
   * number, else unresolved; OSM), `first-go-int-value` (the first of that name: its `containerPort` as
   * `IntValue()`, 0 when not a number; Kuma).
   */
  declared: 'last-number' | 'first-number' | 'first-go-int-value';
}

/**
 * Go `intstr.IntOrString.IntValue()` as it reads a JSON value: a number truncated, a string's `strconv.Atoi`
 * value (0 when Go refuses it, the error ignored), anything else 0.
 */
export function intOrStringValue(v: Json | undefined): number {
  if (typeof v === 'number') return Math.trunc(v);
  const n = typeof v === 'string' ? atoi(v) : undefined;
  return n?.ok ? Number(n.value) : 0;
}

/** The port's number under `rule.number`, or undefined when it reads as none. */
function numberOf(port: Json | undefined, rule: PortRule): number | undefined {
  if (rule.number === 'go-int-value') {
    const n = intOrStringValue(port);
    return n !== 0 ? n : undefined;
  }
  if (typeof port === 'number') return port;
  if (typeof port !== 'string' || rule.number === 'json-only') return undefined;
  const n = toInt32(atoiIgnoringError(port));
  return n !== 0 ? n : undefined;
}

/** The name the port is looked up by under `rule.name`, or undefined when it has none. */
function nameOf(port: Json | undefined, rule: PortRule): string | undefined {
  if (rule.name === 'int-or-string') {
    const text = String(port);
    return text !== '' ? text : undefined;
  }
  return typeof port === 'string' && port !== '' ? port : undefined;
}

/** The container port declared under `name` in `ports`, per `rule.declared`; undefined when none. */
function declaredPort(name: string, ports: readonly JsonObject[], rule: PortRule): number | undefined {
  if (rule.declared === 'last-number') {
    let found: number | undefined;
    for (const p of ports) if (p.name === name && typeof p.containerPort === 'number') found = p.containerPort;
    return found;
  }
  const hit = ports.find((p) => p.name === name);
  if (hit === undefined) return undefined;
  if (rule.declared === 'first-go-int-value') return intOrStringValue(hit.containerPort);
  return typeof hit.containerPort === 'number' ? hit.containerPort : undefined;
}

/** A container's declared ports (`ports`, objects only), for {@link resolveNamedPort}. */
export function declaredPorts(container: JsonObject): JsonObject[] {
  return Array.isArray(container.ports) ? container.ports.filter(isJsonObject) : [];
}

/**
 * A probe's or hook's `port` as a number under one mesh's `rule`: the number reading and the declared port of
 * that name, in `rule.order`.
 * @param port the handler's `port` as written (number, string, or anything else a manifest holds)
 * @param ports the container's declared ports ({@link declaredPorts})
 * @returns the port number, or undefined when the port resolves to none
 */
export function resolveNamedPort(
  port: Json | undefined,
  ports: readonly JsonObject[],
  rule: PortRule,
): number | undefined {
  const byName = (): number | undefined => {
    const name = nameOf(port, rule);
    return name === undefined ? undefined : declaredPort(name, ports, rule);
  };
  if (rule.order === 'name-first') return byName() ?? numberOf(port, rule);
  return numberOf(port, rule) ?? byName();
}
