/**
 * A ResourceList run through meshinject twice comes out of the second run as it came out of the first. Found by
 * fuzzing (2026-11-29): a list that ended in a blank line got `results` after it, and the second run took the
 * blank line away with the old `results` (the range it replaced began at the blank lines and comments before the
 * key).
 *
 * Generated YAML ResourceLists (fixed seed, test/setup/property-seed.mjs): one or two Pods to inject, the
 * functionConfig before or after the items or none (the config given as the run's own then), blank lines and
 * comment lines between the wrapper's entries and at the end, an old `results` or none; through `run` as kpt and
 * kustomize run the function: the first run exits 0, and the second run, on the first's output, gives it back
 * byte for byte.
 */
import t from 'tap';
import fc from 'fast-check';
import { run } from '../../src/index.ts';

const CONFIG = [
  'apiVersion: meshinject.dev/v1alpha1',
  'kind: SidecarInjection',
  'metadata:',
  '  name: rerun',
  'spec:',
  '  mesh: istio',
  '  policy: enabled',
];

/** What stands between two entries of the wrapper, and after the last: blank lines and comments. */
const gap = fc.array(fc.constantFrom('', '# a note', '  # an indented note'), { maxLength: 3 });

const resourceList = fc
  .record({
    pods: fc.integer({ min: 1, max: 2 }),
    config: fc.constantFrom<'before' | 'after' | 'none'>('before', 'after', 'none'),
    oldResults: fc.boolean(),
    gaps: fc.array(gap, { minLength: 4, maxLength: 4 }),
  })
  .map((r) => {
    const [g0 = [], g1 = [], g2 = [], g3 = []] = r.gaps;
    const items = ['items:'];
    for (let i = 0; i < r.pods; i++)
      items.push(
        '- apiVersion: v1',
        '  kind: Pod',
        `  metadata: {name: p${i}, namespace: shop}`,
        '  spec:',
        '    containers:',
        `    - {name: c${i}, image: nginx}`,
      );
    const config = ['functionConfig:', ...CONFIG.map((l) => `  ${l}`)];
    const lines = ['apiVersion: config.kubernetes.io/v1', 'kind: ResourceList', ...g0];
    if (r.config === 'before') lines.push(...config, ...g1);
    lines.push(...items, ...g2);
    if (r.config === 'after') lines.push(...config);
    if (r.oldResults) lines.push('results:', '- message: an old result', '  severity: info');
    lines.push(...g3);
    return { text: `${lines.join('\n')}\n`, own: r.config === 'none' };
  });

t.test('a ResourceList comes out of a second run as out of the first', async (t) => {
  let failure: string | undefined;
  fc.check(
    fc.property(resourceList, ({ text, own }) => {
      const opts = own ? { functionConfig: `${CONFIG.join('\n')}\n` } : {};
      const first = run(text, opts);
      const second = run(first.stdout, opts);
      if (first.exitCode !== 0 || second.exitCode !== 0 || second.stdout !== first.stdout)
        failure = `input:\n${text}\nfirst (exit ${first.exitCode}):\n${first.stdout}\nsecond (exit ${second.exitCode}):\n${second.stdout}`;
      return failure === undefined;
    }),
    { numRuns: 60 },
  );
  t.equal(failure, undefined, 'every generated ResourceList');
});
