/**
 * Generators of pod-shaped JSON for property tests of the status record (test/core/status-repairs.test.ts,
 * test/core/record-check-shortcuts.test.ts): a few keys that collide often, so that maps share keys in different
 * orders, `__proto__` among them.
 */
import fc from 'fast-check';
import type { Json } from '../../src/model.ts';

/**
 * A value built from `keys`, and a pod-like `{metadata, spec}` of such values.
 * @param keys the map keys to draw from
 */
export function podJson(keys: readonly string[]): {
  value: fc.Arbitrary<Json>;
  pod: fc.Arbitrary<{ [k: string]: Json }>;
} {
  const key = fc.constantFrom(...keys);
  const value: fc.Arbitrary<Json> = fc.letrec((tie) => ({
    v: fc.oneof(
      { depthSize: 'small' },
      fc.constantFrom<Json>('HTTP', 8080, '8080', true, null, ''),
      fc.array(tie('v') as fc.Arbitrary<Json>, { maxLength: 3 }),
      fc.dictionary(key, tie('v') as fc.Arbitrary<Json>, { maxKeys: 4 }),
    ),
  })).v;
  const pod = fc.record({ metadata: fc.dictionary(key, value, { maxKeys: 3 }), spec: fc.dictionary(key, value) });
  return { value, pod };
}
