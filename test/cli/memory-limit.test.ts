/**
 * Memory (issue 19, item 6): a run that cannot fit the heap ends with the clear message naming
 * `NODE_OPTIONS=--max-old-space-size`, exit 2 and nothing on stdout; never a V8 FATAL ERROR, at heaps from
 * 64 MB up. The worst class measured: many small workloads (each rendered output is about 34 times its input).
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { BIN, workspace } from '../helpers/e2e.ts';

function smallWorkloads(n: number): string {
  let s = '';
  for (let i = 0; i < n; i++)
    s += `---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w${i}, namespace: s}\nspec:\n  template:\n    metadata: {labels: {app: w${i}}}\n    spec:\n      containers:\n      - {name: a, image: n}\n`;
  return s;
}

for (const [heap, count] of [
  [64, 2500],
  [64, 8000],
  [96, 6000],
] as const) {
  t.test(`${count} small workloads under --max-old-space-size=${heap}`, async (t) => {
    const dir = workspace(t, { 'in.yaml': smallWorkloads(count) }, 'heap');
    const r = spawnSync(process.execPath, [`--max-old-space-size=${heap}`, BIN, join(dir, 'in.yaml')], {
      encoding: 'utf8',
      timeout: 300_000,
      maxBuffer: 256 << 20,
    });
    t.equal(r.signal, null, 'ended by itself');
    t.notMatch(r.stderr, /FATAL ERROR|heap out of memory/, 'no V8 abort');
    if (r.status === 0) {
      t.equal((r.stdout.match(/^kind: Deployment$/gm) ?? []).length, count, 'it fit: every workload written');
      return;
    }
    t.equal(r.status, 2, 'exit 2');
    t.equal(r.stdout, '', 'nothing on stdout');
    t.match(
      r.stderr,
      /^meshinject: error: the input .*heap.*NODE_OPTIONS=--max-old-space-size=\d+ \(megabytes\)/,
      'the clear message',
    );
  });
}
