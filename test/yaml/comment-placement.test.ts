// Where an inserted key lands relative to comments (issue #37 item 2, the class): a comment line above a key is
// that key's (kpt reads it so and writes it again above the key), so no edit may insert a key between them.
// Generated resources hold annotation and label maps whose keys sort before, between and after the keys
// injection adds, each key with or without a comment above it; after injection every comment is still there
// once, directly above the key it was above.
import t from 'tap';
import fc from 'fast-check';
import { run } from '../../src/run.ts';

// Keys of the user's own, and keys Istio reads and writes again (its merge of the prometheus.io annotations puts
// new keys before them).
const keyName = fc.oneof(
  fc.stringMatching(/^[a-z][a-z0-9]{0,5}\.(io|com)\/[a-z]{1,6}$/),
  fc.constantFrom('prometheus.io/scrape', 'prometheus.io/port', 'prometheus.io/path', 'app.kubernetes.io/name'),
);
const entries = fc.uniqueArray(
  fc
    .record({ key: keyName, comment: fc.boolean(), value: fc.constantFrom('true', '8080', 'x1') })
    // (Istio refuses a prometheus.io/port that is not a port it may scrape)
    .map((e) => (e.key === 'prometheus.io/port' ? { ...e, value: '8080' } : e)),
  { selector: (e) => e.key, maxLength: 6 },
);

/** A block map at `indent` with a `# note-<id>-<key>` line above each commented key. */
function block(list: Array<{ key: string; comment: boolean; value: string }>, indent: string, id: string): string {
  return list
    .map((e) => `${e.comment ? `${indent}# note-${id}-${e.key}\n` : ''}${indent}${e.key}: "${e.value}"\n`)
    .join('');
}

t.test('every comment stays once, directly above its key, wherever injection inserts keys', async (t) => {
  fc.assert(
    fc.property(entries, entries, entries, (annotations, labels, meta) => {
      const text = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
${meta.length ? `  annotations:\n${block(meta, '    ', 'm')}` : ''}spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
${block(labels, '        ', 'l')}${annotations.length ? `      annotations:\n${block(annotations, '        ', 'a')}` : ''}    spec:
      containers:
      - name: web
        image: web:1
`;
      const out = run(text);
      if (out.exitCode !== 0) return false;
      const lines = out.stdout.split('\n');
      for (const [list, id] of [
        [annotations, 'a'],
        [labels, 'l'],
        [meta, 'm'],
      ] as const) {
        for (const e of list.filter((x) => x.comment)) {
          const at = lines.flatMap((l, i) => (l.trim() === `# note-${id}-${e.key}` ? [i] : []));
          if (at.length !== 1) return false;
          if (!lines[at[0]! + 1]!.trim().startsWith(`${e.key}:`)) return false;
        }
      }
      return true;
    }),
  );
  t.pass('property held');
});
