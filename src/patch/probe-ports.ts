/**
 * Probe ports given by name (`port: http`) that an injection rewrites, as the companion record keeps them
 * (`OriginalRecord.namedPorts` of ./status-record.ts): found by comparing the pod before and after, and put back
 * by uninject.
 */
import { cloneJson, isJsonObject } from '../json.ts';
import type { JsonObject, PodTemplate } from '../model.ts';

/** A probe port the app gave by name that the injection rewrote: `[container, probe, handler, name]`. */
export type NamedProbePort = [string, string, string, string];

/** The probes of a container, and the handlers whose `port` may be a name. */
export const PROBES = ['livenessProbe', 'readinessProbe', 'startupProbe'] as const;
export const PORT_HANDLERS = ['httpGet', 'tcpSocket'] as const;

const containers = (spec: JsonObject): JsonObject[] =>
  Array.isArray(spec.containers) ? spec.containers.filter(isJsonObject) : [];
const handlerOf = (c: JsonObject | undefined, probe: string, handler: string): JsonObject | undefined => {
  const p = c?.[probe];
  const h = isJsonObject(p) ? p[handler] : undefined;
  return isJsonObject(h) ? h : undefined;
};

/** The probe ports of `before`'s containers given by name that `after` no longer has as that name. */
export function namedProbePorts(before: PodTemplate, after: PodTemplate): NamedProbePort[] {
  const out: NamedProbePort[] = [];
  const now = containers(after.spec);
  for (const c of containers(before.spec)) {
    if (typeof c.name !== 'string') continue;
    const later = now.find((x) => x.name === c.name);
    for (const probe of PROBES) {
      for (const handler of PORT_HANDLERS) {
        const port = handlerOf(c, probe, handler)?.port;
        if (typeof port === 'string' && handlerOf(later, probe, handler)?.port !== port)
          out.push([c.name, probe, handler, port]);
      }
    }
  }
  return out;
}

/** Puts back each recorded port name where the probe now holds the number that name resolves to in the container. */
export function restoreNamedPorts(spec: JsonObject, entries: readonly NamedProbePort[]): JsonObject {
  if (entries.length === 0) return spec;
  const list = containers(spec).map((c) => cloneJson(c));
  for (const [name, probe, handler, port] of entries) {
    const c = list.find((x) => x.name === name);
    const h = handlerOf(c, probe, handler);
    const declared = Array.isArray(c?.ports) ? c.ports.filter(isJsonObject).find((p) => p.name === port) : undefined;
    if (h && declared && h.port === declared.containerPort) h.port = port;
  }
  return { ...spec, containers: list };
}
