/**
 * Kubernetes `resource.Quantity` canonical form, as Go prints a quantity after decoding it into a typed object
 * (`k8s.io/apimachinery/pkg/api/resource`, `Quantity.String()`): `2000m` → `2`, `1024Mi` → `1Gi`. Used where
 * Istio serialises user containers through Go structs (`proxy.istio.io/overrides`).
 */
const BINARY: Record<string, number> = { Ki: 1, Mi: 2, Gi: 3, Ti: 4, Pi: 5, Ei: 6 };
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const DECIMAL_BY_EXP: Record<number, string> = Object.fromEntries(Object.entries(DECIMAL).map(([k, v]) => [v, k]));
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
  const s = String(raw).trim();
  const m = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:(Ki|Mi|Gi|Ti|Pi|Ei)|([numkMGTPE]?)|[eE]([+-]?\d+))$/.exec(s);
  if (!m) return undefined;
  const [, sign, num, bin, dec, exp] = m;
  const [intPart, fracPart = ''] = num!.split('.');
  if (num!.length > MAX_DIGITS || (exp !== undefined && Math.abs(Number(exp)) > MAX_EXPONENT)) return undefined;
  // value = mantissa * 10^scale * 1024^pow
  let mantissa = BigInt((intPart || '0') + fracPart);
  let scale = -fracPart.length;
  let pow = 0;
  let format: 'bin' | 'dec' | 'exp' = 'dec';
  if (bin) {
    pow = BINARY[bin]!;
    format = 'bin';
  } else if (exp !== undefined) {
    scale += Number(exp);
    format = 'exp';
  } else {
    scale += DECIMAL[dec ?? '']!;
  }
  if (mantissa === 0n) return '0';
  // Fold the binary power into an exact decimal representation: mantissa * 10^scale.
  mantissa *= 1024n ** BigInt(pow);
  while (scale < 0 && mantissa % 10n === 0n) {
    mantissa /= 10n;
    scale += 1;
  }
  const neg = sign === '-' ? '-' : '';
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
  // Decimal: choose the largest exponent (multiple of 3, >= -9) keeping an integral mantissa; round up below nano.
  if (scale < -9) {
    const drop = 10n ** BigInt(-9 - scale);
    mantissa = (mantissa + drop - 1n) / drop;
    scale = -9;
  }
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
