/**
 * Golden cases: every `test/testdata/<case>/` holds `input.yaml` (what a runner sends), optional
 * `config.yaml` (passed like `--config`), optional `README.md` (what the case shows), and exactly one
 * expectation:
 * - `expected.yaml`: the whole stdout, compared byte for byte; the output fed back in must not change;
 * - `results.yaml`: only the `results` (one per workload: decisions documented without the injected
 *   output), compared byte for byte; the exit code must be 0;
 * - `errors.txt`: one regular expression per line that stderr must match; the exit code must not be 0.
 * Any other file, or two expectations in one case, fails the test (stale or orphan goldens).
 * `UPDATE_GOLDEN=1 npx tap test/core/golden.test.ts` rewrites expected.yaml and results.yaml; review the diff.
 * Every reason code of the shared rules and of each driver must appear in some golden.
 */
import t from 'tap';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { DRIVERS } from '../../src/drivers/registry.ts';
import type { KrmResult } from '../../src/model.ts';
import { run } from '../../src/run.ts';
import { SHARED_REASONS } from '../../src/selection/policy.ts';

const DATA = new URL('../testdata/', import.meta.url);
const update = process.env.UPDATE_GOLDEN === '1';
const EXPECTATIONS = ['expected.yaml', 'results.yaml', 'errors.txt'];
const ALLOWED = new Set(['input.yaml', 'config.yaml', 'README.md', ...EXPECTATIONS]);

/** The text of a results-only golden: the results as a YAML list. */
function resultsText(results: readonly KrmResult[]): string {
  return stringify(results, { lineWidth: 0 });
}

/** Reason codes seen per mesh (`mesh` of the case's config, default istio). */
const seen = new Map<string, Set<string>>();

function meshOf(config: string | undefined): string {
  return /^\s*mesh:\s*"?([a-z-]+)"?\s*$/m.exec(config ?? '')?.[1] ?? 'istio';
}

for (const name of readdirSync(DATA).sort()) {
  const dir = new URL(`${name}/`, DATA);
  const file = (f: string) => new URL(f, dir);
  t.test(name, async (t) => {
    const files = readdirSync(dir);
    t.same(
      files.filter((f) => !ALLOWED.has(f)),
      [],
      'no stale files',
    );
    const expectations = files.filter((f) => EXPECTATIONS.includes(f));
    t.equal(expectations.length, 1, `exactly one expectation (${expectations.join(', ') || 'none'})`);
    t.ok(existsSync(file('input.yaml')), 'case has input.yaml');
    const input = readFileSync(file('input.yaml'), 'utf8');
    const config = existsSync(file('config.yaml')) ? readFileSync(file('config.yaml'), 'utf8') : undefined;
    const opts = { ...(config !== undefined ? { functionConfig: config } : {}), inputName: 'input.yaml' };
    const out = run(input, opts);
    const reasons = seen.get(meshOf(config)) ?? new Set<string>();
    seen.set(meshOf(config), reasons);
    for (const r of out.results) if (r.tags?.['meshinject.dev/reason']) reasons.add(r.tags['meshinject.dev/reason']);
    if (expectations[0] === 'errors.txt') {
      t.not(out.exitCode, 0, 'fails');
      t.equal(out.stdout === '' || /kind: ResourceList/.test(out.stdout), true, 'no partial output');
      for (const line of readFileSync(file('errors.txt'), 'utf8').split('\n').filter(Boolean)) {
        t.match(out.stderr, new RegExp(line), `stderr matches ${line}`);
      }
      return;
    }
    t.equal(out.exitCode, 0, `exit 0 (stderr: ${out.stderr})`);
    if (expectations[0] === 'results.yaml') {
      if (update) writeFileSync(file('results.yaml'), resultsText(out.results));
      t.equal(
        resultsText(out.results),
        readFileSync(file('results.yaml'), 'utf8'),
        'results equal results.yaml byte for byte',
      );
      return;
    }
    if (update) writeFileSync(file('expected.yaml'), out.stdout);
    t.equal(out.stdout, readFileSync(file('expected.yaml'), 'utf8'), 'output equals expected.yaml byte for byte');
    const again = run(out.stdout, opts);
    t.equal(again.stdout, out.stdout, 'a second run changes nothing');
  });
}

t.test('every reason code appears in a golden, for every driver', async (t) => {
  for (const driver of DRIVERS) {
    const reasons = seen.get(driver.name) ?? new Set<string>();
    // A driver that handles host-network pods itself (Linkerd: an error result) never yields `host-network`.
    const shared = SHARED_REASONS.filter((r) => !(r === 'host-network' && driver.traits?.hostNetwork === 'driver'));
    const missing = [...shared, ...driver.reasons].filter((r) => !reasons.has(r));
    t.same(missing, [], `${driver.name}: every shared and driver reason code has a golden`);
  }
});
