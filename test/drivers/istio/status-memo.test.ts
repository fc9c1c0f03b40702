/**
 * Issue #40: `parseInjectionStatus` remembers what it parsed, by text (every workload of a sidecar plan carries the
 * same `sidecar.istio.io/status`). A remembered answer is the one a fresh parse gives: the same text behind leading
 * spaces (JSON ignores them, the memo does not) is parsed afresh, and both must agree, for valid and invalid texts,
 * across more texts than the memo keeps.
 */
import t from 'tap';
import fc from 'fast-check';
import { parseInjectionStatus } from '../../../src/drivers/istio/status.ts';

const names = fc.oneof(
  fc.constant(null),
  { weight: 8, arbitrary: fc.array(fc.constantFrom('istio-proxy', 'istio-init', 'a', 'b', 'c'), { maxLength: 3 }) },
  fc.constant([1]),
  fc.constant('x'),
);
const statusText = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .record(
        {
          initContainers: names,
          containers: names,
          volumes: names,
          imagePullSecrets: names,
          revision: fc.oneof(fc.constantFrom('default', 'canary', ''), fc.constant(3)),
        },
        { requiredKeys: [] },
      )
      .map((o) => JSON.stringify(o)),
  },
  fc.constantFrom('', 'null', '[]', '{', '{"containers":'),
  fc.string({ maxLength: 8 }),
);

t.test('a remembered status is what a fresh parse of the same text gives', async (t) => {
  let valid = 0;
  let seen = 0;
  fc.assert(
    fc.property(fc.array(statusText, { minLength: 1, maxLength: 40 }), (texts) => {
      for (const text of texts) {
        const first = parseInjectionStatus(text);
        const again = parseInjectionStatus(text);
        // A key never asked before: parsed afresh.
        const fresh = parseInjectionStatus(`${' '.repeat(1 + (seen++ % 997))}${text}`);
        if (first !== undefined) valid++;
        if (JSON.stringify(first) !== JSON.stringify(fresh) || JSON.stringify(again) !== JSON.stringify(fresh))
          return false;
        if (first && !(Object.isFrozen(first) && Object.isFrozen(first.containers))) return false;
      }
      return true;
    }),
    { numRuns: 200 },
  );
  t.ok(valid > 250 && seen > 1000, `${seen} texts, ${valid} of them valid status (more than the memo keeps)`);

  t.same(
    parseInjectionStatus('{"containers":["istio-proxy"],"revision":"canary"}'),
    { initContainers: [], containers: ['istio-proxy'], volumes: [], imagePullSecrets: [], revision: 'canary' },
    'by hand: a valid status',
  );
  t.equal(parseInjectionStatus('{"containers":[1]}'), undefined, 'a list of numbers is not a status');
  t.equal(parseInjectionStatus('{"containers":[1]}'), undefined, '... when asked again too');
  t.equal(parseInjectionStatus(undefined), undefined, 'no annotation');
  const shared = parseInjectionStatus('{"containers":["a"]}')?.containers ?? [];
  t.same(shared, ['a']);
  t.throws(() => shared.push('b'), 'a remembered answer cannot be changed by one caller');
  t.same(parseInjectionStatus('{"containers":["a"]}')?.containers, ['a'], 'so the next caller reads it as parsed');
});
