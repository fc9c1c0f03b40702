/**
 * Comment lines that end a document, indented under its last node (`      # end of containers` after the last
 * container). Found by fuzzing (2026-11-29): they lie past the range of the resource's last node, and the text
 * editor placed an addition after them (the pod template's new `metadata`, after a spec that ends with them), past
 * the range, so the comments were written twice, and uninject kept both.
 *
 * For every driver (test/helpers/round-trip-drivers.ts `faithfulEveryDriver`) and generated workloads whose
 * document ends with one to three comment lines at any indentation from the first column to deeper than the last
 * container's keys, blank lines among them or not, with the pod template's `metadata` present or not and `spec`
 * or `metadata` last, and the stream ending there or going on with `---` and a ConfigMap (fixed seed,
 * test/setup/property-seed.mjs):
 * - the injected output holds each comment line as often as the input does;
 * - injecting the output again gives it back, and uninjecting it gives back the input, byte for byte.
 */
import t from 'tap';
import fc from 'fast-check';
import { faithfulEveryDriver } from '../helpers/round-trip-drivers.ts';

const comment = fc.tuple(fc.integer({ min: 0, max: 10 }), fc.constantFrom('', '\n')).map(([col, blank]) => ({
  col,
  blank,
}));

const workload = fc
  .record({
    comments: fc.array(comment, { minLength: 1, maxLength: 3 }),
    podMeta: fc.constantFrom<'none' | 'first' | 'last'>('none', 'first', 'last'),
    more: fc.boolean(),
  })
  .map((w) => {
    const meta = ['    metadata:', '      labels:', '        app: web'];
    const spec = ['    spec:', '      containers:', '      - name: web', '        image: example/web:1.0'];
    const pod = w.podMeta === 'none' ? spec : w.podMeta === 'first' ? [...meta, ...spec] : [...spec, ...meta];
    const lines = [
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata:',
      '  name: web',
      '  namespace: shop',
      'spec:',
      '  template:',
      ...pod,
    ];
    for (const [i, c] of w.comments.entries()) lines.push(`${c.blank}${' '.repeat(c.col)}# note ${i}`);
    if (w.more) lines.push('---', 'apiVersion: v1', 'kind: ConfigMap', 'metadata:', '  name: after');
    return `${lines.join('\n')}\n`;
  });

/** How often each `# note N` line stands in `text`. */
function notes(text: string): string {
  const found = text.match(/^ *# note \d+$/gm) ?? [];
  return found.sort().join('|');
}

faithfulEveryDriver(
  t,
  'comments ending a document are written once, and given back',
  workload,
  30,
  (input, injected) => notes(input) === notes(injected),
);
