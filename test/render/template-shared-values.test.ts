/**
 * Budgets bound what a template builds, not only how many steps it takes (issue 36, section 1), tried as a tenant
 * who writes the templates would: a value that shares itself (`{{$a = list $a $a}}` forty times) is cheap to build
 * and exponential to serialise; a mid-size value serialised in a long loop is cheap per step and slow in total. A
 * generator makes such programs through every builder and every serialiser or comparison of both engines (Go
 * templates through the istio driver's `values.sidecarInjectorWebhook.templates`, Handlebars through the custom
 * driver, whose partials recurse to double a value), and each run, in a child process with a small heap, must end
 * by itself as the documented budget error (exit 1, naming the template, its line and the budget): never V8's
 * FATAL, never a hang.
 */
import t from 'tap';
import fc from 'fast-check';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN } from '../helpers/e2e.ts';

/** A wall-clock bound far above a budget stop (a few seconds), for a shared and loaded machine. */
const LIMIT_MS = 120_000;
/** The child's heap: far below what one exponential serialisation needs (gigabytes). */
const HEAP_MB = 96;
const RUNS = Number(process.env.PROPERTY_RUNS ?? 10);

/** Go builders: `$a` becomes a value holding the old `$a` twice. */
const GO_BUILDERS = [
  'list $a $a',
  'dict "k" $a "l" $a',
  'append (list $a) $a',
  'prepend (list $a) $a',
  'list (list $a) $a',
];
/** Go serialisers and comparisons: each reads its argument whole. */
const GO_READERS = [
  'toJson $a',
  'toPrettyJson $a',
  'toRawJson $a',
  'toYaml $a',
  'structToJSON $a',
  'toString $a',
  'printf "%v" $a',
  'print $a',
  'println $a',
  'quote $a',
  'squote $a',
  'cat $a',
  'join "," (list $a)',
  'len (uniq (list $a $a))',
  'has $a (list $a)',
  'len (without (list $a) $a)',
  'len (toStrings (list $a))',
  'omitNil $a',
  'dict (toString $a) 1',
];
/** Handlebars readers of `x` (the custom driver's helpers; `{{x}}` is Handlebars' own printing). */
const HBS_READERS = [
  'json x',
  'structToJSON x',
  'toYaml x',
  'quote x',
  'printf "%v" x',
  'str x',
  'join "," x',
  'x',
  'len (list x x)',
  'default x 1',
];
/** Handlebars calls that do not read `x` whole (only the value they build is measured): generated deep only. */
const HBS_CHEAP = new Set(['len (list x x)', 'default x 1']);

function deployment(annotations: Record<string, string>): string {
  const ann = Object.entries(annotations)
    .map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`)
    .join(', ');
  return `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  template:
    metadata: {labels: {app: web}, annotations: {${ann}}}
    spec:
      containers:
      - {name: app, image: nginx}
`;
}

interface Program {
  engine: 'go' | 'handlebars';
  /** Doublings (deep) or loop iterations (wide). */
  shape: 'deep' | 'wide';
  builder: string;
  reader: string;
  depth: number;
  /** The reader's result is written (else only assigned). */
  written: boolean;
}

/** The Go template of a program: line 4 holds the reader. */
function goTemplate(p: Program): string {
  const build = `{{- $a := list 1 }}{{ range until ${p.shape === 'deep' ? p.depth : 12} }}{{ $a = ${p.builder} }}{{ end }}`;
  const read =
    p.shape === 'deep'
      ? p.written
        ? `{{ ${p.reader} }}`
        : `{{ $r := ${p.reader} }}`
      : `{{ range until 200000 }}{{ $r := ${p.reader} }}{{ end }}`;
  return `${build}\nmetadata:\n  annotations:\n    x: |\n      ${read}\n`;
}

/** The Handlebars template of a program: a partial doubles `x` at each call until `s` is `depth` long. */
function hbsTemplate(p: Program): string {
  const depth = p.shape === 'deep' ? p.depth : 12;
  const loop = `(list ${'s '.repeat(200).trim()})`;
  // Inside the two `#each`, `x` is two contexts up.
  const reader = p.shape === 'deep' ? p.reader : p.reader.replace(/\bx\b/g, '../../x');
  const read = p.shape === 'deep' || p.reader === 'x' ? `{{${reader}}}` : `{{#if (${reader})}}{{/if}}`;
  const body = p.shape === 'deep' ? read : `{{#each ${loop}}}{{#each ${loop}}}${read}{{/each}}{{/each}}`;
  return (
    `{{#*inline "p"}}{{#if (gt ${depth} (len s))}}{{> p s=(join "" (list s "a")) x=(list x x)}}{{else}}${body}{{/if}}{{/inline}}` +
    `spec:\n  containers:\n  - name: s\n    image: x\n    args: ["{{> p s="" x=(list 1)}}"]\n`
  );
}

function config(p: Program): string {
  if (p.engine === 'go') {
    return `apiVersion: meshinject.dev/v1alpha1
kind: SidecarInjection
spec:
  mesh: istio
  policy: enabled
  istio:
    version: 1.30.0
    values:
      sidecarInjectorWebhook:
        templates:
          bomb: ${JSON.stringify(goTemplate(p))}
`;
  }
  return `apiVersion: meshinject.dev/v1alpha1
kind: SidecarInjection
spec:
  mesh: custom
  policy: enabled
  custom:
    templates:
      sidecar: ${JSON.stringify(hbsTemplate(p))}
`;
}

const program: fc.Arbitrary<Program> = fc.oneof(
  fc.record({
    engine: fc.constant('go' as const),
    shape: fc.constantFrom('deep' as const, 'wide' as const),
    builder: fc.constantFrom(...GO_BUILDERS),
    reader: fc.constantFrom(...GO_READERS),
    depth: fc.integer({ min: 30, max: 48 }),
    written: fc.boolean(),
  }),
  fc
    .record({
      engine: fc.constant('handlebars' as const),
      shape: fc.constantFrom('deep' as const, 'wide' as const),
      builder: fc.constant('list x x'),
      reader: fc.constantFrom(...HBS_READERS),
      depth: fc.integer({ min: 30, max: 48 }),
      written: fc.constant(true),
    })
    .map((p) => (HBS_CHEAP.has(p.reader) ? { ...p, shape: 'deep' as const } : p)),
);

t.test(
  'a template that builds or reads a shared value ends as the documented budget error, under a small heap',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'meshinject-shared-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    let n = 0;
    fc.assert(
      fc.property(program, (p) => {
        const cfg = join(dir, `cfg${n}.yaml`);
        const app = join(dir, `app${n++}.yaml`);
        writeFileSync(cfg, config(p));
        writeFileSync(app, deployment(p.engine === 'go' ? { 'inject.istio.io/templates': 'bomb' } : {}));
        const t0 = performance.now();
        const env: NodeJS.ProcessEnv = { ...process.env };
        delete env.LOG_TO_STDERR;
        const r = spawnSync(process.execPath, [`--max-old-space-size=${HEAP_MB}`, BIN, '-c', cfg, app], {
          encoding: 'utf8',
          env,
          timeout: LIMIT_MS,
          maxBuffer: 64 << 20,
        });
        const ms = Math.round(performance.now() - t0);
        const what = `${JSON.stringify(p)} (${ms} ms): ${r.stderr.slice(0, 600)}`;
        if (r.signal !== null) throw new Error(`killed by ${r.signal}: ${what}`);
        if (/FATAL ERROR|heap out of memory|internal error|RangeError/.test(r.stderr))
          throw new Error(`crashed: ${what}`);
        if (r.status !== 1 || r.stdout !== '') throw new Error(`not an error result (exit ${r.status}): ${what}`);
        const template =
          p.engine === 'go'
            ? /template: bomb:\d+:\d+: executing "bomb"/
            : /template "sidecar" \(spec\.custom\.templates\.sidecar\) failed at line \d+/;
        if (!template.test(r.stderr)) throw new Error(`does not name the template and its line: ${what}`);
        if (
          !/(step|output) budget of one render, \d+ (steps|characters) \(spec\.templateBudget\.(steps|outputSize)/.test(
            r.stderr,
          )
        )
          throw new Error(`does not name the budget: ${what}`);
      }),
      { numRuns: RUNS },
    );
    t.pass(`${n} generated programs ended as budget errors`);
  },
);
