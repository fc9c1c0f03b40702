/**
 * Kubernetes `resource.Quantity` canonical form, as Go prints a quantity after decoding it into a typed object
 * (`k8s.io/apimachinery/pkg/api/resource`, `Quantity.String()`): `2000m` → `2`, `1024Mi` → `1Gi`. Used where
 * Istio serialises user containers through Go structs (`proxy.istio.io/overrides`).
 */
import { parseQuantity } from '../go-parse.ts';

const DECIMAL_BY_EXP: Record<number, string> = {
  [-9]: 'n',
  [-6]: 'u',
  [-3]: 'm',
  0: '',
  3: 'k',
  6: 'M',
  9: 'G',
  12: 'T',
  15: 'P',
  18: 'E',
};
const BINARY_BY_EXP = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
/** The most digits (with the point) and the largest exponent `canonicalQuantity` canonicalises. */
const MAX_DIGITS = 64;
const MAX_EXPONENT = 100;

/**
 * Canonical string of a Kubernetes `resource.Quantity` (`2000m` → `2`, `1024Mi` → `1Gi`, `1000m` → `1`), as
 * `Quantity.String()` prints it after a round-trip; returns `undefined` when `raw` is not a quantity.
 * Binary-suffixed values below 1024 or fractional ones print in decimal SI, like k8s `CanonicalizeBytes`.
 * Also `undefined`, so that callers keep the value as written, for a quantity of more than `MAX_DIGITS` digits
 * or an exponent beyond ±`MAX_EXPONENT` (no resource is that large or that precise; exact big-number arithmetic
 * on them would take time and memory that grow faster than the input: issue 19).
 */
export function canonicalQuantity(raw: string | number): string | undefined {
  // Quantity.UnmarshalJSON: strings.TrimSpace, then resource.ParseQuantity (../go-parse.ts).
  const s = String(raw).trim();
  if (s.length > MAX_DIGITS) return undefined;
  const parsed = parseQuantity(s);
  if (!parsed.ok || Math.abs(parsed.value.exponent) > MAX_EXPONENT) return undefined;
  const q = parsed.value;
  // value = mantissa * 10^scale (Go already folded a binary suffix in and rounded up to the nano).
  let mantissa = q.unscaled;
  let scale = q.exponent;
  let format: 'bin' | 'dec' | 'exp' = q.format === 'BinarySI' ? 'bin' : q.format === 'DecimalExponent' ? 'exp' : 'dec';
  if (mantissa === 0n) return '0';
  while (scale < 0 && mantissa % 10n === 0n) {
    mantissa /= 10n;
    scale += 1;
  }
  const neg = q.negative ? '-' : '';
  if (format === 'bin') {
    const isInt = scale >= 0;
    const value = isInt ? mantissa * 10n ** BigInt(scale) : 0n;
    if (isInt && value >= 1024n) {
      let v = value;
      let p = 0;
      while (p < 6 && v % 1024n === 0n) {
        v /= 1024n;
        p += 1;
      }
      return `${neg}${v}${BINARY_BY_EXP[p]}`;
    }
    format = 'dec';
  }
  // Decimal: choose the largest exponent (multiple of 3, >= -9: Go rounded finer values up) keeping an integral mantissa.
  let e = Math.floor(scale / 3) * 3;
  let v = mantissa * 10n ** BigInt(scale - e);
  while (e < 18 && v % 1000n === 0n && v !== 0n) {
    v /= 1000n;
    e += 3;
  }
  if (format === 'exp') return `${neg}${v}${e === 0 ? '' : `e${e}`}`;
  if (e > 18) return `${neg}${v * 10n ** BigInt(e - 18)}E`;
  return `${neg}${v}${DECIMAL_BY_EXP[e]}`;
}
