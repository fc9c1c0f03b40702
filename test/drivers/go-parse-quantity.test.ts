// Kubernetes `resource.ParseQuantity` and Go `strconv.ParseFloat` as src/drivers/go-parse.ts runs them (issue #37,
// item 4): tables written from apimachinery's pkg/api/resource/quantity.go (`parseQuantityString`, `ParseQuantity`,
// suffix.go) and Go's strconv/atof.go read by hand, then properties over generated strings (signs, leading zeros,
// fractions, every suffix and near-suffixes, exponents, blanks, unicode digits, underscores, hex floats) against a
// reference written from the documented grammar and exact rational arithmetic.
import t from 'tap';
import fc from 'fast-check';
import { goParseFloat, parseQuantity, QUANTITY_ERRORS, scaledValue } from '../../src/drivers/go-parse.ts';

type Want = bigint | keyof typeof QUANTITY_ERRORS;

/** `[text, MilliValue or the error Go gives]`. */
const QUANTITIES: ReadonlyArray<[string, Want]> = [
  ['0', 0n],
  ['1', 1000n],
  ['1100m', 1100n],
  ['+2', 2000n],
  ['-2', -2000n],
  ['0002', 2000n],
  ['1.', 1000n],
  ['.5', 500n],
  ['.', 0n], // no digit at all: Go's numerator defaults to "0"
  ['+', 0n],
  ['1.G', 1000000000000n],
  ['1n', 1n], // rounded up to the milli
  ['-1n', -1n], // the int64 path rounds away from zero
  ['1Ki', 1024000n],
  ['1.5Ki', 1536000n],
  ['1k', 1000000n],
  ['1E', 10n ** 21n], // exa, not an exponent
  ['1e3', 1000000n],
  ['1E3', 1000000n],
  ['1e+3', 1000000n],
  ['1e-3', 1n],
  ['10Ei', (2n ** 63n - 1n) * 1000n], // a binary quantity is capped at 2^63-1
  ['1e-20', 1n], // the inf.Dec path rounds up to the nano first
  ['', 'format'],
  [' 1', 'format'],
  ['1 ', 'format'],
  ['1 core', 'format'],
  ['0x10', 'format'],
  ['1.2.3', 'format'],
  ['1e3.5', 'format'],
  ['\u0661', 'format'], // an Arabic-Indic digit is no digit to Go
  ['\uff11', 'format'],
  ['1_000', 'format'],
  ['1K', 'suffix'],
  ['1KI', 'format'], // I is no suffix character,
  ['1e', 'suffix'],
  ['1Mm', 'suffix'],
  ['1e99999999999999999999', 'suffix'], // the exponent is ParseInt(.., 10, 64)
  ['1ee3', 'suffix'],
  ['.e-10', 'numeric'], // the inf.Dec path needs a digit
];

t.test('ParseQuantity: the table', async (t) => {
  for (const [s, want] of QUANTITIES) {
    const got = parseQuantity(s);
    if (typeof want === 'bigint') {
      t.ok(got.ok, `${JSON.stringify(s)} parses`);
      if (got.ok) t.equal(scaledValue(got.value, -3), want, `${JSON.stringify(s)}: MilliValue`);
    } else t.same(got, { ok: false, error: QUANTITY_ERRORS[want] }, `${JSON.stringify(s)}: ${want}`);
  }
});

t.test('ParseQuantity: Value() rounds up; the two representations round a negative value differently', async (t) => {
  const value = (s: string) => {
    const q = parseQuantity(s);
    return q.ok ? scaledValue(q.value, 0) : undefined;
  };
  t.equal(value('1500m'), 2n);
  t.equal(value('-1500m'), -2n, 'int64 path: away from zero');
  t.equal(value('-1234567890123456789.5'), -1234567890123456789n, 'inf.Dec path: towards +infinity');
  t.equal(value('123456789012345678901'), 123456789012345678901n, 'more than 18 digits');
});

const SUFFIXES = ['', 'n', 'u', 'm', 'k', 'M', 'G', 'T', 'P', 'E', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
const DECIMAL_EXP: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_EXP: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

const MAX_INT64 = (1n << 63n) - 1n;

/** Ceiling of a positive rational `n / d`. */
const ceilDiv = (n: bigint, d: bigint): bigint => (n + d - 1n) / d;

/**
 * The reference: the documented grammar `[+-]? digits? (. digits?)? suffix` with a suffix from the tables or an
 * exponent `[eE][+-]?digits`, and the value as an exact fraction; MilliValue of a non-negative one is its ceiling.
 */
function reference(s: string): Want {
  const m = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(.*)$/s.exec(s);
  if (!m || s === '') return 'format';
  const [, sign = '', int = '', frac = '', rest = ''] = m;
  if (!/^[eEinumkKMGTP]*[-+]?[0-9]*$/.test(rest)) return 'format';
  let num = BigInt(`0${int}${frac}`);
  let den = 10n ** BigInt(frac.length);
  if (rest in BINARY_EXP) num *= 2n ** BigInt(BINARY_EXP[rest] ?? 0);
  else if (rest in DECIMAL_EXP || /^[eE][+-]?[0-9]+$/.test(rest)) {
    const e = rest in DECIMAL_EXP ? (DECIMAL_EXP[rest] ?? 0) : Number(rest.slice(1));
    if (e >= 0) num *= 10n ** BigInt(e);
    else den *= 10n ** BigInt(-e);
    if (!/[0-9]/.test(int + frac) && e - frac.length < -9) return 'numeric';
  } else return 'suffix';
  // Go caps a binary quantity at 2^63-1 (`maxAllowed`).
  if (rest in BINARY_EXP && num > MAX_INT64 * den) [num, den] = [MAX_INT64, 1n];
  const milli = ceilDiv(num * 1000n, den);
  return sign === '-' && milli !== 0n ? -milli : milli;
}

t.test('properties: ParseQuantity over generated strings equals the grammar and exact arithmetic', async (t) => {
  const digits = fc.array(fc.constantFrom('0', '0', '1', '5', '9'), { maxLength: 7 }).map((d) => d.join(''));
  const suffix = fc.oneof(
    fc.constantFrom(...SUFFIXES, 'K', 'KI', 'e', 'E+', 'iK', 'mm', 'x', ' ', '_', '\u0661', 'e1.5'),
    fc
      .tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.integer({ min: 0, max: 25 }))
      .map((p) => p.join('')),
  );
  const text = fc
    .tuple(
      fc.constantFrom('', '', '+', '-', ' ', '++'),
      digits,
      fc.constantFrom('', '', '.', '..'),
      digits,
      suffix,
      fc.constantFrom('', '', '', ' ', '1', '.'),
    )
    .map((p) => p.join(''));
  let accepted = 0;
  fc.assert(
    fc.property(text, (s) => {
      const want = reference(s);
      const got = parseQuantity(s);
      if (typeof want !== 'bigint') return !got.ok && got.error === QUANTITY_ERRORS[want];
      if (!got.ok) return false;
      accepted++;
      // Go's int64 path rounds a negative value away from zero, like the reference's negated ceiling.
      return got.value.negative && !got.value.int64 ? true : scaledValue(got.value, -3) === want;
    }),
    { numRuns: 5000 },
  );
  t.ok(accepted > 0, `${accepted} generated quantities accepted and compared`);
});

/** `[text, value or 'syntax'/'range']` for ParseFloat(s, 64), from strconv/atof.go. */
const FLOATS: ReadonlyArray<[string, number | 'syntax' | 'range']> = [
  ['0.5', 0.5],
  ['+0.5', 0.5],
  ['-.5', -0.5],
  ['1.', 1],
  ['1e3', 1000],
  ['1E-3', 0.001],
  ['1_000.5', 1000.5],
  ['1e1_0', 1e10],
  ['0x1.8p-1', 0.75],
  ['0X_1P+2', 4],
  ['inf', Number.POSITIVE_INFINITY],
  ['-Infinity', Number.NEGATIVE_INFINITY],
  ['+INF', Number.POSITIVE_INFINITY],
  ['1e-400', 0], // underflow is no error
  ['1e400', 'range'],
  ['-1e400', 'range'],
  ['0x1p2000', 'range'],
  ['', 'syntax'],
  ['.', 'syntax'],
  ['e1', 'syntax'],
  ['1e', 'syntax'],
  ['_1', 'syntax'],
  ['1_', 'syntax'],
  ['1__0', 'syntax'],
  ['1_.5', 'syntax'],
  ['1._5', 'syntax'],
  ['0x1', 'syntax'], // a hex float needs its p exponent
  ['0x1.8', 'syntax'],
  ['0x.p1', 'syntax'],
  ['+nan', 'syntax'],
  [' 1', 'syntax'],
  ['1 ', 'syntax'],
  ['1f', 'syntax'],
  ['\u0661', 'syntax'],
  ['Infinity1', 'syntax'],
];

t.test('ParseFloat: the table', async (t) => {
  for (const [s, want] of FLOATS) {
    const got = goParseFloat(s);
    if (typeof want === 'number') t.same(got, { ok: true, value: want }, JSON.stringify(s));
    else
      t.same(
        got,
        {
          ok: false,
          error: `strconv.ParseFloat: parsing ${JSON.stringify(s)}: ${want === 'syntax' ? 'invalid syntax' : 'value out of range'}`,
        },
        JSON.stringify(s),
      );
  }
  t.ok(Number.isNaN((goParseFloat('NaN') as { value: number }).value), 'NaN');
});

t.test('properties: ParseFloat of generated literals', async (t) => {
  const run = fc.stringMatching(/^[0-9]{1,6}$/);
  // Decimal: a digit run split by single underscores is the number without them, rounded once.
  const underscored = (d: string, cuts: number[]) =>
    cuts.reduce(
      (s, c) => (c > 0 && c < s.length && s[c - 1] !== '_' && s[c] !== '_' ? `${s.slice(0, c)}_${s.slice(c)}` : s),
      d,
    );
  fc.assert(
    fc.property(
      fc.constantFrom('', '+', '-'),
      run,
      run,
      fc.integer({ min: -30, max: 30 }),
      fc.array(fc.nat(6), { maxLength: 2 }),
      (sign, int, frac, exp, cuts) => {
        const canonical = `${sign}${int}.${frac}e${exp}`;
        const want = Number(canonical);
        const got = goParseFloat(`${sign}${underscored(int, cuts)}.${frac}e${exp}`);
        return got.ok && Object.is(got.value, want);
      },
    ),
  );
  // Hex: m * 2^p exactly (m below 2^53), written as `0x<hex>p<p>` and with a hex point moved in.
  fc.assert(
    fc.property(
      fc.bigInt({ min: 0n, max: (1n << 53n) - 1n }),
      fc.integer({ min: -60, max: 60 }),
      fc.nat(3),
      (m, p, shift) => {
        const hex = m.toString(16).padStart(shift + 1, '0');
        const text = `0x${hex.slice(0, hex.length - shift)}.${hex.slice(hex.length - shift)}p${p + 4 * shift}`;
        const got = goParseFloat(text);
        return got.ok && got.value === Number(m) * 2 ** p;
      },
    ),
  );
  // Anything with a blank, a doubled sign or a trailing underscore is refused.
  fc.assert(
    fc.property(run, fc.constantFrom(' 1', '1 ', '--1', '+-1', '1_', '_1', '1.5_', '\t1'), (d, bad) => {
      const s = bad.replace('1', d);
      return !goParseFloat(s).ok;
    }),
  );
  t.pass('ParseFloat properties hold');
});
