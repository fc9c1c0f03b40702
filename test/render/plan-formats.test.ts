/**
 * Sidecar plans and formatting by length (src/render/go-plan-rules.ts `printfRule`): a template that formats a
 * copied value with a width or a precision (`printf "%9s"` pads, `%.3s` cuts) or by its bytes (`%x`) prints a
 * placeholder's token otherwise than the value, so a plan recorded with tokens would fill a wrongly padded or
 * cut text. Generated formats (flags, widths, precisions, argument indexes, verbs) and values (names of 1 to 20
 * characters, digit strings) run through both template engines (an Istio Go template of an injector config,
 * the custom driver's Handlebars) with plans on and off: what a user sees must be the same.
 */
import t from 'tap';
import fc from 'fast-check';
import { run, type RunOutput } from '../../src/run.ts';
import type { PlanStats } from '../../src/render/plans.ts';

const VERIFY_GLOBAL = Symbol.for('meshinject.verifyPlans');

/** An Istio injector config whose sidecar template formats the pod's annotation `example.com/v` with `format`. */
function goConfig(format: string): string {
  const template = [
    'metadata:',
    '  annotations:',
    `    example.com/out: {{ printf \`${format}\` (index .ObjectMeta.Annotations "example.com/v") | quote }}`,
    'spec:',
    '  containers:',
    '  - name: istio-proxy',
    '    image: proxy:1',
  ].join('\n');
  return config({
    mesh: 'istio',
    istio: { injectorConfig: { defaultTemplates: ['sidecar'], templates: { sidecar: template } } },
  });
}

/** The custom driver's Handlebars template formatting the same annotation. */
function handlebarsConfig(format: string): string {
  const template = [
    'metadata:',
    '  annotations:',
    `    example.com/out: {{quote (printf "${format}" (index pod.metadata.annotations "example.com/v"))}}`,
    'spec:',
    '  containers:',
    '  - name: shipper',
    '    image: fb:3',
  ].join('\n');
  return config({ mesh: 'custom', custom: { templates: { sidecar: template } } });
}

const config = (spec: Record<string, unknown>): string =>
  JSON.stringify({
    apiVersion: 'meshinject.dev/v1alpha1',
    kind: 'SidecarInjection',
    spec: { policy: 'enabled', ...spec },
  });

/** Deployments named `w<i>` whose pod template carries `example.com/v: <value>` (quoted: digit strings stay strings). */
function fleet(values: readonly string[]): string {
  return values
    .map(
      (v, i) =>
        `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: w${i}\nspec:\n  template:\n    metadata:\n      annotations:\n        example.com/v: "${v}"\n    spec:\n      containers:\n      - name: app\n        image: app:1\n`,
    )
    .join('---\n');
}

const seen = (r: RunOutput) => ({ exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr });

/** The run with plans on (unverified: the suite's preload set aside) and off, and the on run's plan counters. */
function onAndOff(input: string, functionConfig: string) {
  const g = globalThis as Record<symbol, unknown>;
  const preload = g[VERIFY_GLOBAL];
  const stats: PlanStats = { lookups: 0, hits: 0, recorded: 0, full: 0, keyed: 0 };
  try {
    g[VERIFY_GLOBAL] = false;
    const on = run(input, { functionConfig, plans: { enabled: true, verify: false, recordOnRepeat: false, stats } });
    const off = run(input, { functionConfig, plans: { enabled: false, verify: false } });
    return { on: seen(on), off: seen(off), stats };
  } finally {
    g[VERIFY_GLOBAL] = preload;
  }
}

/** A printf directive: flags, width, precision, an argument index, a verb. */
const directive = fc
  .record({
    flags: fc.subarray(['-', '+', '#', ' ', '0']),
    width: fc.option(fc.integer({ min: 0, max: 14 }), { nil: undefined }),
    prec: fc.option(fc.integer({ min: 0, max: 14 }), { nil: undefined }),
    index: fc.boolean(),
    verb: fc.constantFrom('s', 'v', 'q', 'd', 'x', 'X', 'T'),
  })
  .map(
    (d) =>
      `%${d.flags.join('')}${d.index ? '[1]' : ''}${d.width ?? ''}${d.prec === undefined ? '' : `.${d.prec}`}${d.verb}`,
  );
const format = fc
  .tuple(fc.constantFrom('', '[', 'id=', '100%% '), directive, fc.constantFrom('', ']', ' end'))
  .map(([a, d, b]) => `${a}${d}${b}`);
const value = fc.oneof(
  fc.stringMatching(/^[a-z][a-z0-9-]{0,18}[a-z0-9]$/),
  fc.constantFrom('ab', 'reviews', 'a', 'productpage-v1-frontend'),
  fc.integer({ min: 1, max: 999_999 }).map(String),
);

t.test(
  'printf with a width: the plan is not used, each value is padded as a full render pads it (Go template)',
  async (t) => {
    const r = onAndOff(fleet(['reviews', 'ab', 'xyz']), goConfig('[%9s]'));
    t.same(r.on, r.off);
    t.match(r.on.stdout, /example\.com\/out: '\[ {7}ab\]'/, 'ab padded to 9');
    t.equal(r.stats.hits, 0, 'no workload served by a plan');
    const bare = onAndOff(fleet(['reviews', 'ab', 'xyz']), goConfig('[%s]'));
    t.same(bare.on, bare.off);
    t.ok(bare.stats.hits >= 2, 'a bare %s still plans');
  },
);

t.test(
  'generated formats and values: plans on and off give the same output, through both template engines',
  async (t) => {
    let cases = 0;
    fc.assert(
      fc.property(format, fc.array(value, { minLength: 3, maxLength: 5 }), (f, values) => {
        for (const [engine, functionConfig] of [
          ['go', goConfig(f)],
          ['handlebars', handlebarsConfig(f)],
        ] as const) {
          const r = onAndOff(fleet(values), functionConfig);
          cases++;
          if (JSON.stringify(r.on) !== JSON.stringify(r.off)) {
            t.same(r.on, r.off, `${engine} ${f} ${values.join(',')}`);
            return false;
          }
        }
        return true;
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 40) },
    );
    t.ok(cases >= 80, `${cases} runs compared`);
  },
);
