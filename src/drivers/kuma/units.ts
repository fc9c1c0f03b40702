/**
 * The two Go value formats Kuma writes into a pod: `time.Duration` (`KUMA_DATAPLANE_DRAIN_TIME: 31s`,
 * `sleepBetweenRetries: 2s`) and the CPU `resource.Quantity` its concurrency is derived from.
 */

import { parseDuration, parseQuantity, scaledValue } from '../go-parse.ts';

/**
 * Nanoseconds of a Go duration string (`time.ParseDuration`, ../go-parse.ts: `1h2m3.5s`, `500ms`, `-2s`, `0`),
 * or undefined when Go refuses it. Precise below 2^53 ns (about 104 days).
 */
export function parseGoDuration(s: string): number | undefined {
  const d = parseDuration(s);
  return d.ok ? Number(d.value) : undefined;
}

/** Go's `time.Duration.String()` of `ns` nanoseconds: `31s`, `1m30s`, `1h0m0s`, `500ms`, `1.5µs`, `0s`. */
export function formatGoDuration(ns: number): string {
  if (ns === 0) return '0s';
  const sign = ns < 0 ? '-' : '';
  const a = Math.abs(ns);
  const frac = (v: number, unit: number): string => {
    const whole = Math.floor(v / unit);
    const rem = v - whole * unit;
    if (rem === 0) return String(whole);
    const digits = String(unit).length - 1;
    return `${whole}.${String(rem).padStart(digits, '0').replace(/0+$/, '')}`;
  };
  if (a < 1e3) return `${sign}${a}ns`;
  if (a < 1e6) return `${sign}${frac(a, 1e3)}µs`;
  if (a < 1e9) return `${sign}${frac(a, 1e6)}ms`;
  const h = Math.floor(a / 3600e9);
  const m = Math.floor((a - h * 3600e9) / 60e9);
  const s = frac(a - h * 3600e9 - m * 60e9, 1e9);
  if (h > 0) return `${sign}${h}h${m}m${s}s`;
  if (m > 0) return `${sign}${m}m${s}s`;
  return `${sign}${s}s`;
}

/**
 * Go `Quantity.MilliValue()` of a Kubernetes quantity (`resource.ParseQuantity`, ../go-parse.ts): thousandths,
 * rounded up (`1100m` → 1100, `2` → 2000, `1e3` → 1000000); 0 when Go refuses it (Kuma's `kube_api.MustParse`
 * would stop kuma-cp on it).
 */
export function milliValue(q: string): number {
  const parsed = parseQuantity(q);
  return parsed.ok ? Number(scaledValue(parsed.value, -3)) : 0;
}
