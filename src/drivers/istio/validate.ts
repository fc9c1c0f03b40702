/**
 * Validation of the per-pod annotations Istio checks before injecting (`AnnotationValidation`,
 * pkg/kube/inject/validate.go). An invalid value fails the injection of that workload with Istio's message
 * `invalid value '<v>' for annotation '<k>': <reason>`.
 */
import { InjectError } from '../../results/errors.ts';
import { readProxyConfigAnnotation } from './proxy-config.ts';
import { parseGoBool } from './pod-fields.ts';
import { atoi, parseQuantity, parseUint } from '../go-parse.ts';

type Check = (value: string) => string | undefined;

/** Go `strconv.ParseUint(v, 10, bits)` error text (../go-parse.ts), or undefined when `v` parses. */
function parseUintError(v: string, bits: 16 | 32): string | undefined {
  const n = parseUint(v, 10, bits);
  return n.ok ? undefined : n.error;
}

/** Istio `parsePort`: a uint16 after trimming blanks. */
function portError(p: string): string | undefined {
  const e = parseUintError(p.trim(), 16);
  return e ? `failed parsing port '${p}': ${e}` : undefined;
}

/** Istio `parsePorts`: comma list of ports; empty (after trimming) is valid. */
function portListError(name: string, ports: string): string | undefined {
  const s = ports.trim();
  if (s === '') return undefined;
  for (const p of s.split(',')) {
    const e = portError(p);
    if (e) return `${name} invalid: failed parsing port '${p}': ${e}`;
  }
  return undefined;
}

const IPV4_RE = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

function isIPv6(s: string): boolean {
  if (s.includes('%')) return false;
  let str = s;
  let groups = 8;
  // An embedded IPv4 tail (`::ffff:1.2.3.4`): taken by its characters here, checked by IPV4_RE below.
  const v4 = /:([0-9.]+)$/.exec(str);
  if (v4) {
    const [, tail = ''] = v4;
    if (!IPV4_RE.test(tail)) return false;
    str = `${str.slice(0, str.length - tail.length)}0`;
    groups = 7;
  }
  const halves = str.split('::');
  if (halves.length > 2) return false;
  const parts = (h: string): string[] => (h === '' ? [] : h.split(':'));
  const all = halves.flatMap(parts);
  if (!all.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return false;
  return halves.length === 2 ? all.length < groups : all.length === groups;
}

/** Go `netip.ParsePrefix` error text (strict: no blanks, no leading zeros, prefix length in range). */
function prefixError(cidr: string): string | undefined {
  const q = `netip.ParsePrefix(${JSON.stringify(cidr)})`;
  const slash = cidr.lastIndexOf('/');
  if (slash < 0) return `${q}: no '/'`;
  const addr = cidr.slice(0, slash);
  const bits = cidr.slice(slash + 1);
  const v4 = IPV4_RE.test(addr);
  if (!v4 && !isIPv6(addr)) return `${q}: ParseAddr(${JSON.stringify(addr)}): unable to parse IP`;
  // Go netip.ParsePrefix: strconv.Atoi, and no sign or leading zero; then the length against the family's bits.
  const n = atoi(bits);
  if (!n.ok || (bits.length > 1 && !(bits[0] !== undefined && bits[0] >= '1' && bits[0] <= '9')))
    return `${q}: bad bits after slash: ${JSON.stringify(bits)}`;
  if (n.value < 0n || n.value > (v4 ? 32n : 128n)) return `${q}: prefix length out of range`;
  return undefined;
}

/** Istio `validateCIDRList`: comma list of prefixes (no trimming); empty is valid. */
function cidrListError(cidrs: string): string | undefined {
  if (cidrs === '') return undefined;
  for (const c of cidrs.split(',')) {
    const e = prefixError(c);
    if (e) return `failed parsing cidr '${c}': ${e}`;
  }
  return undefined;
}

/** Network interface names: comma list of non-empty names of at most 15 characters without blanks or `/`. */
function interfacesError(v: string): string | undefined {
  if (v.trim() === '') return undefined;
  for (const raw of v.split(',')) {
    const n = raw.trim();
    if (n === '' || n.length > 15 || /[\s/]/.test(n) || n === '.' || n === '..')
      return `invalid interface name '${raw}'`;
  }
  return undefined;
}

/** Go `unicode.IsControl`: C0, DEL and C1 (U+0080-U+009F). */
const isControl = (c: number): boolean => c < 0x20 || (c >= 0x7f && c <= 0x9f);

/** Istio `validateResourceQuantity`: no control character, then Kubernetes `resource.ParseQuantity` (../go-parse.ts). */
function quantityError(v: string): string | undefined {
  for (const ch of v) if (isControl(ch.codePointAt(0) ?? 0)) return 'value contains control characters';
  const q = parseQuantity(v);
  return q.ok ? undefined : q.error;
}

function proxyConfigError(v: string): string | undefined {
  const read = readProxyConfigAnnotation(v);
  return read.ok ? undefined : read.reason;
}

/** The annotations Istio validates and how (Istio `AnnotationValidation`). */
export const ANNOTATION_VALIDATION: Readonly<Record<string, Check>> = {
  'sidecar.istio.io/interceptionMode': (v) =>
    ['REDIRECT', 'TPROXY', 'NONE'].includes(v) ? undefined : `interceptionMode invalid, use REDIRECT,TPROXY,NONE: ${v}`,
  'status.sidecar.istio.io/port': (v) => {
    const e = portError(v);
    return e ? `excludeInboundPorts invalid: ${e}` : undefined;
  },
  'readiness.status.sidecar.istio.io/initialDelaySeconds': (v) => parseUintError(v, 32),
  'readiness.status.sidecar.istio.io/periodSeconds': (v) => parseUintError(v, 32),
  'readiness.status.sidecar.istio.io/failureThreshold': (v) => parseUintError(v, 32),
  'traffic.sidecar.istio.io/includeOutboundIPRanges': (v) => {
    const e = v === '*' ? undefined : cidrListError(v);
    return e ? `includeIPRanges invalid: ${e}` : undefined;
  },
  'traffic.sidecar.istio.io/excludeOutboundIPRanges': (v) => {
    const e = cidrListError(v);
    return e ? `excludeIPRanges invalid: ${e}` : undefined;
  },
  'traffic.sidecar.istio.io/includeInboundPorts': (v) =>
    v === '*' ? undefined : portListError('includeInboundPorts', v),
  'traffic.sidecar.istio.io/excludeInboundPorts': (v) => portListError('excludeInboundPorts', v),
  'traffic.sidecar.istio.io/excludeOutboundPorts': (v) => portListError('excludeOutboundPorts', v),
  'traffic.sidecar.istio.io/excludeInterfaces': interfacesError,
  'traffic.sidecar.istio.io/kubevirtInterfaces': interfacesError,
  'istio.io/reroute-virtual-interfaces': interfacesError,
  'prometheus.istio.io/merge-metrics': (v) =>
    parseGoBool(v) === undefined ? `strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax` : undefined,
  'proxy.istio.io/config': proxyConfigError,
  'sidecar.istio.io/proxyCPU': quantityError,
  'sidecar.istio.io/proxyMemory': quantityError,
  'sidecar.istio.io/proxyCPULimit': quantityError,
  'sidecar.istio.io/proxyMemoryLimit': quantityError,
};

/**
 * Checks every validated annotation of a pod (Istio `validateAnnotations`).
 * @param annotations the pod template's annotations
 * @param fieldPrefix KRM path of the annotations map, e.g. `spec.template.metadata.annotations`
 * @throws InjectError (code `BAD_ANNOTATION`) naming every invalid annotation (joined with `; `); its
 *   `field` is `<fieldPrefix>[<first invalid key>]`.
 */
export function validateAnnotations(
  annotations: Record<string, string> | undefined,
  fieldPrefix = 'metadata.annotations',
): void {
  const errors: Array<{ key: string; message: string }> = [];
  for (const [key, value] of Object.entries(annotations ?? {})) {
    const check = Object.hasOwn(ANNOTATION_VALIDATION, key) ? ANNOTATION_VALIDATION[key] : undefined;
    if (!check) continue;
    const reason = check(String(value));
    if (reason !== undefined)
      errors.push({ key, message: `invalid value '${value}' for annotation '${key}': ${reason}` });
  }
  const [first] = errors;
  if (!first) return;
  throw new InjectError(errors.map((e) => e.message).join('; '), {
    field: `${fieldPrefix}[${first.key}]`,
    code: 'BAD_ANNOTATION',
  });
}
