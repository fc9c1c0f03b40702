/**
 * Uninject after inject gives back the input bytes when the user's pod template carries YAML anchors and aliases
 * on the nodes an injection rewrites or removes (issue #37 item 3: "an alias such as `labels: *labels`, an
 * anchor"). Generated: a Deployment whose app container has a readiness probe (httpGet, grpc, tcpSocket or exec:
 * the handlers Istio, Kuma, OSM and FSM rewrite) written with an anchor, the liveness or startup probe an alias
 * of it or a copy, the container entry itself anchored or not (`- &app`), a tag on the probe or not; run through
 * every driver: inject, then uninject with the same functionConfig, both with `resultAnnotations: false` (the
 * result annotation records meshinject's own state by design). The round trip must give back the input byte for
 * byte, or inject must refuse the workload with an error result; it must never lose the anchor silently.
 *
 * Found by h42r (issue #40 session): an anchored probe that Istio rewrote came back without its anchor, and the
 * alias that pointed at it came back expanded (`src/edit/source-texts.ts` walked into the anchored map and kept
 * only its changed parts).
 */
import t from 'tap';
import fc from 'fast-check';
import { run } from '../../src/index.ts';
import { deployment } from '../helpers/fixtures.ts';

const DRIVERS = ['istio', 'linkerd', 'osm', 'fsm', 'kuma', 'custom'] as const;

/** A functionConfig for `mesh` and `mode`, without result annotations (the custom driver with a small template). */
function fnConfig(mesh: (typeof DRIVERS)[number], mode: 'inject' | 'uninject'): string {
  const custom =
    mesh === 'custom'
      ? {
          custom: {
            templates: {
              sidecar: 'spec:\n  containers:\n  - name: shipper\n    image: fb:3\n',
            },
          },
        }
      : {};
  return JSON.stringify({
    apiVersion: 'meshinject.dev/v1alpha1',
    kind: 'SidecarInjection',
    spec: { mesh, policy: 'enabled', resultAnnotations: false, mode, ...custom },
  });
}

const HANDLERS = {
  httpGet: ['httpGet:', '  path: /healthz', '  port: 8080'],
  grpc: ['grpc:', '  port: 8080'],
  tcpSocket: ['tcpSocket:', '  port: 8080'],
  exec: ['exec:', '  command: [cat, /tmp/ready]'],
} as const;

interface Case {
  handler: keyof typeof HANDLERS;
  /** How the second probe is written: an alias of the first, a copy, or absent. */
  second: 'alias' | 'copy' | 'none';
  secondKey: 'livenessProbe' | 'startupProbe';
  anchoredEntry: boolean;
  tagged: boolean;
  periodSeconds: boolean;
}

const caseArb: fc.Arbitrary<Case> = fc.record({
  handler: fc.constantFrom('httpGet', 'grpc', 'tcpSocket', 'exec'),
  second: fc.constantFrom('alias', 'copy', 'none'),
  secondKey: fc.constantFrom('livenessProbe', 'startupProbe'),
  anchoredEntry: fc.boolean(),
  tagged: fc.boolean(),
  periodSeconds: fc.boolean(),
});

const indent = (lines: readonly string[], n: number): string[] => lines.map((l) => ' '.repeat(n) + l);

/** The Deployment of case `c`: the fixture Deployment, its container entry anchored or not, with ports and probes. */
function input(c: Case): string {
  const probe = [...HANDLERS[c.handler], ...(c.periodSeconds ? ['periodSeconds: 5'] : [])];
  const props = `&probe${c.tagged ? ' !!map' : ''}`;
  const second =
    c.second === 'alias'
      ? [`${c.secondKey}: *probe`]
      : c.second === 'copy'
        ? [`${c.secondKey}:`, ...indent(probe, 2)]
        : [];
  const entry = c.anchoredEntry ? '      - &app\n        name: web\n' : '      - name: web\n';
  const lines = ['        ports:', '        - containerPort: 8080', `        readinessProbe: ${props}`];
  return `${deployment('web', { image: 'nginx:1.27' }).replace('      - name: web\n', entry)}${[
    ...lines,
    ...indent(probe, 10),
    ...indent(second, 8),
  ].join('\n')}\n`;
}

t.test('anchors and aliases on rewritten probes: uninject gives back the input, or inject refuses', async (t) => {
  const tally = new Map<string, { exact: number; refused: number; rewritten: number }>();
  for (const mesh of DRIVERS) {
    const counts = { exact: 0, refused: 0, rewritten: 0 };
    tally.set(mesh, counts);
    fc.assert(
      fc.property(caseArb, (c) => {
        const text = input(c);
        const injected = run(text, { functionConfig: fnConfig(mesh, 'inject') });
        if (injected.exitCode !== 0) {
          // A refusal names the workload; the input is not written half-done (stdout holds it unchanged or nothing).
          counts.refused++;
          return injected.results.some((r) => r.severity === 'error');
        }
        // Rewritten: the probe's handler, as written, is no longer in the output.
        if (!injected.stdout.includes(indent(HANDLERS[c.handler], 10).join('\n'))) counts.rewritten++;
        const back = run(injected.stdout, { functionConfig: fnConfig(mesh, 'uninject') });
        if (back.exitCode !== 0 || back.stdout !== text) {
          t.equal(back.stdout, text, `${mesh}: ${JSON.stringify(c)}`);
          return false;
        }
        counts.exact++;
        return true;
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 40) },
    );
  }
  t.comment(`per driver: ${JSON.stringify(Object.fromEntries(tally))}`);
  // Not vacuous: the probe-rewriting drivers round-tripped probes they rewrote (the anchor taken out and put back).
  for (const mesh of ['istio', 'kuma']) {
    const c = tally.get(mesh);
    t.ok(c && c.exact > 0 && c.rewritten > 0, `${mesh}: rewrote anchored probes and gave them back`);
  }
});

t.test('the reported case: an anchored grpc readiness probe, the startup probe its alias (Istio)', async (t) => {
  const text = input({
    handler: 'grpc',
    second: 'alias',
    secondKey: 'startupProbe',
    anchoredEntry: false,
    tagged: false,
    periodSeconds: false,
  });
  const injected = run(text, { functionConfig: fnConfig('istio', 'inject') });
  t.equal(injected.exitCode, 0, 'injected');
  t.match(injected.stdout, /path: \/app-health\/web\/readyz/, 'the readiness probe was rewritten');
  const back = run(injected.stdout, { functionConfig: fnConfig('istio', 'uninject') });
  t.equal(back.exitCode, 0, 'uninjected');
  t.equal(back.stdout, text, 'the anchor and the alias are back, byte for byte');
});
