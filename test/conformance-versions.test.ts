import t from 'tap';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { checkMinimums, corpusDirs, ensureFreshBundle, runConformance, summarize } from '../scripts/conformance/runner.ts';

// The Istio release corpora (test/vendored/conformance/istio-versions/<release>): each release's own templates,
// values and goldens, run through the CLI like ../istio (test/conformance.test.ts).
const root = fileURLToPath(new URL('../', import.meta.url));

const versionsRoot = fileURLToPath(new URL('./vendored/conformance/istio-versions', import.meta.url));

t.test('Istio release corpora (istio-versions/<release>): pass counts do not drop', { timeout: 900_000 }, async (t) => {
  const b = ensureFreshBundle(root);
  t.equal(b.status, 0, `build: ${b.stderr}`);
  const min = JSON.parse(readFileSync(join(root, 'test/conformance-versions-min.json'), 'utf8')) as Record<string, number>;
  const releases = corpusDirs(versionsRoot);
  t.ok(releases.length > 0, 'at least one release corpus');
  const summary: Record<string, { passed: number; total: number }> = {};
  for (const release of releases) {
    const results = await runConformance(release.dir, { concurrency: 4 });
    for (const r of results) if (!r.pass) t.comment(`FAIL ${release.label}/${r.name} [${r.category}]: ${r.reason}`);
    for (const [cat, s] of Object.entries(summarize(results))) {
      summary[`${release.label}/${cat}`] = s;
      t.comment(`istio ${release.label} conformance: ${s.passed}/${s.total} passed (${cat})`);
    }
  }
  t.same(checkMinimums(summary, min), [], 'no release category below its minimum');
});
