import t from 'tap';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import {
  checkMinimums,
  corpusDirs,
  ensureFreshBundle,
  runConformance,
  sampleNames,
  summarize,
  type CaseResult,
} from '../../scripts/conformance/runner.ts';
import { corpus, needs, recordCases } from '../helpers/data.ts';

// The Istio release corpora (conformance/istio-versions/<release> of the test data, test/helpers/data.ts): each release's own templates,
// values and goldens, run through the CLI like ../istio (test/conformance/corpora.test.ts). Every case spawns the CLI, so the
// suite runs a deterministic sample of about SAMPLE cases per release (every category represented, evenly spaced by
// name) and allows in it no more failures than the release's minimum allows in the full set; MESHINJECT_CONFORMANCE_FULL=1 (or
// `npm run conformance -- "$MESHINJECT_TEST_DATA/conformance/istio-versions" --min test/conformance/conformance-versions-min.json`) runs
// every case against the minimums.
const root = fileURLToPath(new URL('../../', import.meta.url));
const VERSIONS = corpus('conformance/istio-versions');
const versionsRoot = VERSIONS.path ?? '';
const FULL = process.env.MESHINJECT_CONFORMANCE_FULL === '1';
const SAMPLE = 8;

t.test('sampleNames: deterministic, spread, never more than asked', async (t) => {
  const names = Array.from({ length: 100 }, (_, i) => `c${String(i).padStart(3, '0')}`);
  const s = sampleNames(names, 12);
  t.equal(s.length, 12);
  t.equal(new Set(s).size, 12, 'no case twice');
  t.same(sampleNames(names, 12), s, 'same sample every time');
  t.equal(s[0], 'c000');
  t.ok(s.at(-1)! >= 'c090', 'reaches the end of the alphabet');
  t.same(sampleNames(names.slice(0, 5), 12), names.slice(0, 5), 'a small corpus runs whole');
});

t.test(
  'Istio release corpora (istio-versions/<release>): pass counts do not drop',
  { timeout: 900_000, ...needs(VERSIONS) },
  async (t) => {
    const b = ensureFreshBundle(root);
    t.equal(b.status, 0, `build: ${b.stderr}`);
    const min = JSON.parse(
      readFileSync(join(root, 'test/conformance/conformance-versions-min.json'), 'utf8'),
    ) as Record<string, number>;
    const releases = corpusDirs(versionsRoot);
    t.ok(releases.length >= 5, 'the 1.26, 1.28, 1.29, 1.30 and 1.31 corpora are there');
    for (const release of releases) {
      if (!Object.keys(min).some((k) => k.startsWith(`${release.label}/`)))
        t.comment(
          `${release.label}: no minimum counts in test/conformance/conformance-versions-min.json (results shown, not enforced)`,
        );
    }
    const summary: Record<string, { passed: number; total: number }> = {};
    for (const release of releases) {
      const results: CaseResult[] = await runConformance(release.dir, {
        concurrency: 4,
        ...(FULL ? {} : { sample: SAMPLE }),
      });
      recordCases(`conformance/istio-versions/${release.label}`, results.length);
      for (const r of results) if (!r.pass) t.comment(`FAIL ${release.label}/${r.name} [${r.category}]: ${r.reason}`);
      for (const [cat, s] of Object.entries(summarize(results))) {
        summary[`${release.label}/${cat}`] = s;
        t.comment(
          `istio ${release.label} conformance: ${s.passed}/${s.total} passed (${cat})${FULL ? '' : ' [sample]'}`,
        );
      }
    }
    if (FULL) {
      t.same(checkMinimums(summary, min), [], 'no release category below its minimum');
      return;
    }
    // In a sample, a category may fail at most as many cases as its minimum lets the full set fail.
    for (const [cat, want] of Object.entries(min)) {
      const release = cat.split('/')[0]!;
      const full = JSON.parse(readFileSync(join(versionsRoot, release, 'corpus.json'), 'utf8')) as {
        writtenByCategory: Record<string, number>;
      };
      const allowed = (full.writtenByCategory[cat.slice(release.length + 1)] ?? 0) - want;
      const s = summary[cat] ?? { passed: 0, total: 0 };
      t.ok(
        s.total - s.passed <= allowed,
        `${cat}: ${s.total - s.passed} of ${s.total} sampled cases fail (the minimum allows ${allowed} in the full set)`,
      );
    }
  },
);
