/**
 * Memory grows linearly with the input (issue #40 §3), checked by ratio, not by time: the CLI's peak RSS (GNU
 * `time`) on the bench's all-workloads package at n and 4 n workloads, each less the peak of a 10-workload run
 * (Node, the bundle and the engine), must grow at most 4 × 1.25 times. `npm run bench -- --class memory` measures
 * the same at 10 000 and 100 000 workloads. The bench's line-by-line count of injected workloads (used there
 * because a 100 000-workload output is longer than a string may be) counts as the whole-file count does.
 */
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { countInjectedLines } from '../../bench/memory.ts';
import { hasGnuTime, measure } from '../../bench/measure.ts';
import { countInjected, MESH_CONFIGS, packageResources, writePackage } from '../../bench/package.ts';
import { BIN } from '../helpers/e2e.ts';

/** The bound on RSS growth over a ×4 size step, less the baseline: linear is 4. */
const BOUND = 4 * 1.25;

t.test('peak RSS over a 10-workload run grows linearly with the workloads (n and 4 n)', async (t) => {
  if (!hasGnuTime()) return void t.fail('GNU time (/usr/bin/time -f) is needed to read the peak RSS');
  const tmp = mkdtempSync(join(tmpdir(), 'meshinject-memory-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const config = join(tmp, 'istio.yaml');
  writeFileSync(config, MESH_CONFIGS.istio);
  const peak = new Map<number, number>();
  for (const n of [10, 300, 1200]) {
    const dir = join(tmp, `pkg-${n}`);
    writePackage(dir, packageResources('all-workloads', n));
    const out = join(tmp, `out-${n}.yaml`);
    const m = await measure('node', [BIN, '-q', '-c', config, dir], { stdoutFile: out, timeoutSeconds: 600 });
    t.equal(m.exitCode, 0, `${n} workloads: exit 0 (${m.stderr.slice(0, 300)})`);
    t.equal(await countInjectedLines(out), n, `${n} workloads: every workload injected`);
    peak.set(n, m.maxRssMB);
  }
  const [base, small, large] = [peak.get(10), peak.get(300), peak.get(1200)];
  if (base === undefined || small === undefined || large === undefined) return void t.fail('a size was not measured');
  t.ok(small > base && large > small, `peak RSS grows with the input: ${base}, ${small}, ${large} MB`);
  const growth = (large - base) / (small - base);
  t.ok(
    growth <= BOUND,
    `RSS above the 10-workload run grows ${growth.toFixed(2)} × for 4 × the workloads (≤ ${BOUND})`,
  );
});

t.test("the bench's line-by-line count of injected workloads is the whole-file count", async (t) => {
  const tmp = mkdtempSync(join(tmpdir(), 'meshinject-memory-count-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const config = join(tmp, 'istio.yaml');
  writeFileSync(config, MESH_CONFIGS.istio);
  const dir = join(tmp, 'pkg');
  writePackage(dir, packageResources('all-workloads', 12));
  const out = join(tmp, 'out.yaml');
  const m = await measure('node', [BIN, '-q', '-c', config, dir], { stdoutFile: out });
  t.equal(m.exitCode, 0, m.stderr.slice(0, 300));
  t.equal(await countInjectedLines(out), 12, 'every workload counted');
  t.equal(countInjected(out, 'istio'), 12, 'the whole-file count agrees');
  // An annotation without a proxy container is not an injection; a proxy line without the annotation neither.
  const annotated = join(tmp, 'annotated.yaml');
  writeFileSync(
    annotated,
    'metadata:\n  annotations:\n    meshinject.dev/injection: injected (istio)\n---\nspec:\n  containers:\n  - name: istio-proxy\n  - name: istio-proxy\n',
  );
  t.equal(await countInjectedLines(annotated), 1, 'the fewer of annotations and proxies');
  t.equal(countInjected(annotated, 'istio'), 1, 'as the whole-file count');
});
