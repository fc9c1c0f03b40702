/**
 * Traffic redirection of the OSM family: the pod's exclusion annotations merged with the mesh-wide lists
 * (OSM `getPortExclusionListForPod`, `getOutboundIPRangeListForPod`, `mergePortExclusionLists`,
 * `mergeIPRangeLists`, pkg/injector/exclusions.go) and the `iptables-restore` script of the init container
 * (`generateIptablesCommands`, pkg/injector/iptables.go; FSM's is the same with `FSM_` chains).
 */
import { quoteData } from '../../results/quote.ts';
import { InjectError } from '../../results/errors.ts';
import { keys, PORTS, type Flavor } from './flavor.ts';
import type { OsmSettings } from './config.ts';
import { atoi, parseCIDR } from '../go-parse.ts';

/** True when `s` is a CIDR as Go's `net.ParseCIDR` reads it (../go-parse.ts; OSM `getOutboundIPRangeListForPod`). */
export function parseCidr(s: string): boolean {
  return parseCIDR(s).ok;
}

/** The redirection lists of one pod, merged and de-duplicated. */
export interface TrafficLists {
  inboundPorts: number[];
  outboundPorts: number[];
  outboundIPExclusions: string[];
  outboundIPInclusions: string[];
  interfaces: string[];
}

/** The comma-separated entries of an annotation, trimmed (Go `strings.Split` + `TrimSpace`: an empty value is one empty entry). */
function entries(value: string): string[] {
  return value.split(',').map((s) => s.trim());
}

/**
 * Ports from a pod annotation: each entry a positive decimal integer (Go `strconv.Atoi` > 0; OSM accepts
 * values above 65535 and iptables then fails, so they are refused here too).
 * @throws InjectError naming the annotation and the entry
 */
function podPorts(annotations: Record<string, string>, key: string): number[] {
  const raw = annotations[key];
  if (raw === undefined) return [];
  return entries(raw).map((p) => {
    // OSM getPortExclusionListForPod: strconv.Atoi of the trimmed entry, refused at or below 0.
    const n = atoi(p);
    if (!n.ok || n.value <= 0n || n.value > 65535n) {
      throw new InjectError(
        `invalid port ${quoteData(p)} in annotation ${key} (${quoteData(raw)}): expected comma-separated port numbers 1-65535`,
        { field: `metadata.annotations[${key}]`, code: 'BAD_ANNOTATION' },
      );
    }
    return Number(n.value);
  });
}

/**
 * CIDRs from a pod annotation (`net.ParseCIDR` each entry).
 * @throws InjectError naming the annotation and the entry
 */
function podCidrs(annotations: Record<string, string>, key: string): string[] {
  const raw = annotations[key];
  if (raw === undefined) return [];
  return entries(raw).map((c) => {
    if (!parseCidr(c)) {
      throw new InjectError(
        `invalid IP range ${quoteData(c)} in annotation ${key} (${quoteData(raw)}): expected comma-separated CIDRs such as 10.0.0.0/8`,
        { field: `metadata.annotations[${key}]`, code: 'BAD_ANNOTATION' },
      );
    }
    return c;
  });
}

/** `first` then `second`, each value once, in order of first appearance. */
function union<T>(first: readonly T[], second: readonly T[]): T[] {
  return [...new Set([...first, ...second])];
}

/**
 * The pod's redirection lists: ports mesh-wide first, then the pod's; IP ranges the pod's first, then the
 * mesh-wide ones (OSM's merge order); interfaces only mesh-wide (there is no pod annotation).
 * @throws InjectError for an invalid port or CIDR, naming the annotation
 */
export function trafficLists(annotations: Record<string, string>, settings: OsmSettings): TrafficLists {
  const k = keys(settings.flavor);
  const t = settings.traffic;
  return {
    outboundPorts: union(t.outboundPortExclusionList, podPorts(annotations, k.outboundPorts)),
    inboundPorts: union(t.inboundPortExclusionList, podPorts(annotations, k.inboundPorts)),
    outboundIPExclusions: union(podCidrs(annotations, k.outboundIPExclusions), t.outboundIPRangeExclusionList),
    outboundIPInclusions: union(podCidrs(annotations, k.outboundIPInclusions), t.outboundIPRangeInclusionList),
    interfaces: [...t.networkInterfaceExclusionList],
  };
}

/**
 * The init container's shell command: `iptables-restore --noflush <<EOF ... EOF` with the nat table rules
 * in OSM's order (static inbound, interface and inbound-port exclusions inserted at the top, static
 * outbound, the PodIP DNAT, interface, CIDR and port exclusions, then either the inclusion CIDRs and a final
 * RETURN or the catch-all redirect). Ends with a newline, as OSM's `fmt.Sprintf` does.
 */
export function iptablesScript(flavor: Flavor, lists: TrafficLists, localProxyMode: 'Localhost' | 'PodIP'): string {
  const c = flavor.chainPrefix;
  const IN = `${c}_PROXY_INBOUND`;
  const IN_REDIRECT = `${c}_PROXY_IN_REDIRECT`;
  const OUT = `${c}_PROXY_OUTBOUND`;
  const OUT_REDIRECT = `${c}_PROXY_OUT_REDIRECT`;
  const uid = PORTS.uid;
  const rules: string[] = [
    `-A ${IN_REDIRECT} -p tcp -j REDIRECT --to-port ${PORTS.inbound}`,
    `-A PREROUTING -p tcp -j ${IN}`,
    ...[PORTS.prometheus, PORTS.liveness, PORTS.readiness, PORTS.startup, PORTS.healthcheck].map(
      (p) => `-A ${IN} -p tcp --dport ${p} -j RETURN`,
    ),
    `-A ${IN} -p tcp -j ${IN_REDIRECT}`,
    ...lists.interfaces.map((i) => `-I ${IN} -i ${i} -j RETURN`),
    ...(lists.inboundPorts.length > 0
      ? [`-I ${IN} -p tcp --match multiport --dports ${lists.inboundPorts.join(',')} -j RETURN`]
      : []),
    `-A ${OUT_REDIRECT} -p tcp -j REDIRECT --to-port ${PORTS.outbound}`,
    `-A ${OUT_REDIRECT} -p tcp --dport ${PORTS.admin} -j ACCEPT`,
    `-A OUTPUT -p tcp -j ${OUT}`,
    `-A ${OUT} -o lo ! -d 127.0.0.1/32 -m owner --uid-owner ${uid} -j ${IN_REDIRECT}`,
    `-A ${OUT} -o lo -m owner ! --uid-owner ${uid} -j RETURN`,
    `-A ${OUT} -m owner --uid-owner ${uid} -j RETURN`,
    `-A ${OUT} -d 127.0.0.1/32 -j RETURN`,
    ...(localProxyMode === 'PodIP'
      ? [`-I OUTPUT -p tcp -o lo -d 127.0.0.1/32 -m owner --uid-owner ${uid} -j DNAT --to-destination $POD_IP`]
      : []),
    ...lists.interfaces.map((i) => `-A ${OUT} -o ${i} -j RETURN`),
    ...lists.outboundIPExclusions.map((cidr) => `-A ${OUT} -d ${cidr} -j RETURN`),
    ...(lists.outboundPorts.length > 0
      ? [`-A ${OUT} -p tcp --match multiport --dports ${lists.outboundPorts.join(',')} -j RETURN`]
      : []),
    ...(lists.outboundIPInclusions.length > 0
      ? [...lists.outboundIPInclusions.map((cidr) => `-A ${OUT} -d ${cidr} -j ${OUT_REDIRECT}`), `-A ${OUT} -j RETURN`]
      : [`-A ${OUT} -j ${OUT_REDIRECT}`]),
  ];
  const header = [
    `# ${flavor.title} sidecar interception rules`,
    '*nat',
    ...[IN, IN_REDIRECT, OUT, OUT_REDIRECT].map((ch) => `:${ch} - [0:0]`),
  ];
  return `iptables-restore --noflush <<EOF\n${[...header, ...rules, 'COMMIT'].join('\n')}\nEOF\n`;
}
