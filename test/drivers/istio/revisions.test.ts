// Several Istio revisions in one render (issue #38 item 5): spec.istio.revisions and the map form of
// spec.istio.revisionTags under selection: webhook. The oracle is the render of each revision alone (one
// revision, its tags, its values), as each revision's own webhook would inject: the render of several
// revisions must give every workload exactly what the one revision whose webhook selects it gives.
import t from 'tap';
import fc from 'fast-check';
import { run } from '../../../src/run.ts';
import type { KrmResult } from '../../../src/model.ts';
import type { Obj } from '../../helpers/e2e.ts';
import { deploymentYaml, docsOf, namespaceYaml } from '../../helpers/fixtures.ts';

type Labels = Record<string, string>;
const REVISIONS: Record<string, { tag: string; tags: string[] }> = {
  stable: { tag: '1.27.0', tags: ['default'] },
  canary: { tag: '1.28.0', tags: ['prod'] },
};
const MULTI = `apiVersion: meshinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: x}
spec:
  istio:
    selection: webhook
    revisions:
      stable: {values: {global: {tag: "1.27.0"}}}
      canary: {values: {global: {tag: "1.28.0"}}}
    revisionTags: {default: stable, prod: canary}
`;
/** One revision alone, as its own webhook configuration (and its tags) would inject. */
const single = (rev: string) => `apiVersion: meshinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: x}
spec:
  istio:
    selection: webhook
    revision: ${rev}
    revisionTags: ${JSON.stringify(REVISIONS[rev]!.tags)}
    values: {global: {tag: "${REVISIONS[rev]!.tag}"}}
`;
const nsYaml = namespaceYaml;
const deployYaml = deploymentYaml;
const docs = docsOf;
const byName = (text: string) =>
  new Map(docs(text).map((d) => [(d.metadata as Obj).name as string, JSON.stringify(d)]));
const outcomeOf = (results: readonly KrmResult[], name: string) =>
  results.find((r) => r.resourceRef?.name === name && r.tags?.['meshinject.dev/outcome']);

const arbNs = fc.constantFrom<Labels>(
  {},
  { 'istio.io/rev': 'stable' },
  { 'istio.io/rev': 'canary' },
  { 'istio.io/rev': 'prod' },
  { 'istio.io/rev': 'default' },
  { 'istio.io/rev': 'old' },
  { 'istio-injection': 'enabled' },
  { 'istio-injection': 'disabled' },
  { 'istio-injection': 'enabled', 'istio.io/rev': 'canary' },
);
const arbPod = fc.constantFrom<Labels>(
  {},
  { 'istio.io/rev': 'canary' },
  { 'istio.io/rev': 'prod' },
  { 'istio.io/rev': 'stable' },
  { 'sidecar.istio.io/inject': 'true' },
  { 'sidecar.istio.io/inject': 'false' },
  { 'istio.io/rev': 'old' },
);

t.test(
  'several revisions in one render inject each workload as the one revision whose webhook selects it',
  async (t) => {
    let injected = 0;
    let skipped = 0;
    fc.assert(
      fc.property(fc.array(fc.tuple(arbNs, arbPod), { minLength: 1, maxLength: 3 }), (cases) => {
        const input = cases
          .flatMap(([ns, pod], i) => [nsYaml(`ns${i}`, ns), deployYaml(`w${i}`, `ns${i}`, pod)])
          .join('---\n');
        const multi = run(input, { functionConfig: MULTI, inputName: 'in.yaml' });
        if (multi.exitCode !== 0) throw new Error(multi.stderr);
        const alone = Object.keys(REVISIONS).map((rev) => ({
          rev,
          out: run(input, { functionConfig: single(rev), inputName: 'in.yaml' }),
        }));
        const got = byName(multi.stdout);
        cases.forEach((_, i) => {
          const name = `w${i}`;
          const by = alone.filter(
            (a) => outcomeOf(a.out.results, name)?.tags?.['meshinject.dev/outcome'] === 'injected',
          );
          if (by.length > 1)
            throw new Error(`${name}: two revisions' webhooks select it (${by.map((b) => b.rev).join(', ')})`);
          const r = outcomeOf(multi.results, name);
          if (by.length === 0) {
            if (r?.tags?.['meshinject.dev/outcome'] !== 'skipped')
              throw new Error(`${name}: no revision injects it alone, but: ${r?.message}`);
            skipped++;
            return;
          }
          const rev = by[0]!.rev;
          if (got.get(name) !== byName(by[0]!.out.stdout).get(name))
            throw new Error(`${name}: differs from revision ${rev} alone`);
          if (
            r?.tags?.['meshinject.dev/revision'] !== rev ||
            !r.message.startsWith(`injected (istio, revision ${rev})`)
          )
            throw new Error(`${name}: the result does not name revision ${rev}: ${r?.message}`);
          injected++;
        });
        if (multi.results.some((x) => x.severity === 'warning')) throw new Error(`a warning: ${multi.stderr}`);
      }),
      { numRuns: 25 },
    );
    t.ok(
      injected > 5 && skipped > 5,
      `${injected} workloads injected, ${skipped} skipped, as the revisions alone would`,
    );
  },
);

t.test(
  'a package of both revisions: no false warning, and the injected package is stable under a second run',
  async (t) => {
    const input = [
      nsYaml('a', { 'istio.io/rev': 'stable' }),
      nsYaml('b', { 'istio.io/rev': 'canary' }),
      deployYaml('web', 'a', {}),
      deployYaml('api', 'b', {}),
    ].join('---\n');
    const first = run(input, { functionConfig: MULTI });
    t.equal(first.exitCode, 0, first.stderr);
    t.same(
      first.results.filter((r) => r.severity !== 'info'),
      [],
      'no warnings',
    );
    t.match(first.stdout, /proxyv2:1\.27\.0[\s\S]*proxyv2:1\.28\.0/, "each revision's own proxy image");
    const again = run(first.stdout, { functionConfig: MULTI });
    t.equal(again.stdout, first.stdout, 'a second run changes nothing');
    const check = run(first.stdout, { functionConfig: MULTI, check: { failOn: 'drift' } });
    t.equal(check.exitCode, 0, 'a check of the injected package passes (no drift across revisions)');
    const un = run(first.stdout, { functionConfig: MULTI.replace('  istio:', '  mode: uninject\n  istio:') });
    t.equal(un.exitCode, 0, un.stderr);
    t.notMatch(un.stdout, /istio-proxy/, 'uninject takes both revisions off');
  },
);

t.test('config: tags that name no revision, two default holders, revisions without webhook selection', async (t) => {
  const bad = run(deployYaml('w', 'a', {}), {
    functionConfig: MULTI.replace('{default: stable, prod: canary}', '{default: stable, prod: gone}'),
  });
  t.equal(bad.exitCode, 1);
  t.match(
    bad.stderr,
    /spec\.istio\.revisionTags\.prod names revision "gone", which is not under spec\.istio\.revisions \(stable, canary\)/,
  );
  const two = run(deployYaml('w', 'a', {}), {
    functionConfig: MULTI.replace('{default: stable, prod: canary}', '{default: canary}').replace(
      'stable:',
      'default:',
    ),
  });
  t.equal(two.exitCode, 1);
  t.match(two.stderr, /two revisions would hold Istio's default webhooks .*: default, canary/);
  const list = run(deployYaml('w', 'a', {}), {
    functionConfig: MULTI.replace('{default: stable, prod: canary}', '[prod]'),
  });
  t.match(list.stderr, /spec\.istio\.revisionTags must map each tag to a revision of spec\.istio\.revisions/);
  const rev = run(deployYaml('w', 'a', {}), {
    functionConfig: MULTI.replace('    selection: webhook\n', '    selection: webhook\n    revision: other\n'),
  });
  t.match(rev.stderr, /spec\.istio\.revision is "other", which is not under spec\.istio\.revisions/);
  const inert = run(deployYaml('w', 'a', {}), {
    functionConfig: MULTI.replace('    selection: webhook\n', ''),
    logToStderr: true,
  });
  t.equal(inert.exitCode, 0);
  t.match(inert.stderr, /spec\.istio\.revisions has no effect unless spec\.istio\.selection is webhook/);
});
