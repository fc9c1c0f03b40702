/**
 * The two Go value formats Kuma writes into a pod: `time.Duration` (`KUMA_DATAPLANE_DRAIN_TIME: 31s`,
 * `sleepBetweenRetries: 2s`) and the CPU `resource.Quantity` its concurrency is derived from.
 */

import { parseDuration } from '../go-parse.ts';

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

const SUFFIX: Record<string, number> = {
  '': 1,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
  Ti: 1024 ** 4,
  Pi: 1024 ** 5,
  Ei: 1024 ** 6,
};

/**
 * The value of a Kubernetes quantity (`1100m` → 1.1, `2` → 2, `1e3` → 1000), or undefined when it does not
 * parse (Kuma's `kube_api.MustParse` would panic on it).
 */
export function quantityValue(q: string): number | undefined {
  const m = /^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(?:([eE][+-]?[0-9]+)|(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?)$/.exec(
    q.trim(),
  );
  if (!m) return undefined;
  const n = Number(m[1]);
  if (m[2]) return n * 10 ** Number(m[2].slice(1));
  return n * SUFFIX[m[3] ?? '']!;
}

/** Go `Quantity.MilliValue()`: the value in thousandths, rounded up. */
export function milliValue(q: string): number {
  const v = quantityValue(q) ?? 0;
  return Math.ceil(Math.round(v * 1e9) / 1e6);
}
