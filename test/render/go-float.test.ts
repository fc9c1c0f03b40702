/**
 * Go `%v` of a float64 (`formatGoFloat`, src/render/go-values.ts): what a Go template prints for a number of
 * Istio's values (`statusPort` 15020) or a JSON number in a template. Integers below 10^6 in magnitude take a
 * shortcut; every number prints what the general path (shortest digits, Go's exponent rule) prints.
 */
import t from 'tap';
import fc from 'fast-check';
import { formatGoFloat, goFloatGeneral } from '../../src/render/go-values.ts';

t.test("Go's own output at the shortcut's edges (strconv.FormatFloat(f, 'g', -1, 64))", async (t) => {
  const cases: Array<[number, string]> = [
    [1, '1'],
    [-1, '-1'],
    [15020, '15020'],
    [100000, '100000'],
    [999999, '999999'],
    [-999999, '-999999'],
    [1000000, '1e+06'],
    [-1000000, '-1e+06'],
    [1200000, '1.2e+06'],
    [999999.5, '999999.5'],
    [0.5, '0.5'],
    [-0, '-0'],
  ];
  for (const [n, want] of cases) t.equal(formatGoFloat(n), want, String(n));
});

t.test('every integer and every double prints as the general path prints it', async (t) => {
  const nonZero = (n: number) => n !== 0 && Number.isFinite(n);
  fc.assert(
    fc.property(fc.integer({ min: -2_000_000, max: 2_000_000 }).filter(nonZero), (n) => {
      t.equal(formatGoFloat(n), goFloatGeneral(n));
    }),
    { numRuns: 2000 },
  );
  fc.assert(
    fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }).filter(nonZero), (n) => {
      t.equal(formatGoFloat(n), goFloatGeneral(n));
    }),
    { numRuns: 2000 },
  );
});
