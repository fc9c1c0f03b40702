// src/render/hbs-runtime.ts runs precompiled templates as Handlebars' own runtime does: each template below is
// rendered both ways in one environment (precompiled spec on this runtime, the same source compiled by
// Handlebars) and the outputs, or the errors, must be the same. test/drivers/istio/render.test.ts does the same for the
// shipped Istio templates over the conformance cases.
import t from 'tap';
import Handlebars from 'handlebars';
import { templateOf } from '../../src/render/hbs-runtime.ts';
import { TEMPLATE_FUNCTIONS } from '../../src/render/template-functions.ts';
import { ISTIO_TEMPLATE_FUNCTIONS } from '../../src/drivers/istio/template-functions.ts';
import { SHARED_PLAN_RULES } from '../../src/render/plan-helpers.ts';

const OPTIONS = { strict: true, noEscape: true };

function env(): typeof Handlebars {
  const hb = Handlebars.create();
  hb.registerHelper('upper', (s: unknown) => String(s).toUpperCase());
  hb.registerHelper('wrap', function (this: unknown, options: Handlebars.HelperOptions) {
    return `[${options.fn(this)}]`;
  });
  hb.registerPartial('shared', 'shared {{name}}\nline two\n');
  return hb;
}

/** `source` precompiled, as the build ships it (scripts/gen-templates.mjs), evaluated to its spec object. */
function specOf(source: string) {
  // The precompiled source is code, evaluated as the build's generated module would be.
  return new Function(`return ${Handlebars.precompile(source, OPTIONS)}`)();
}

/** The render of `source` with `data` on both runtimes: `[ours, handlebars]`, an error as `error: message`. */
function both(source: string, data: unknown): [string, string] {
  const hb = env();
  const ours = templateOf(specOf(source), hb);
  const theirs = hb.compile(source, OPTIONS);
  const run = (f: () => string) => {
    try {
      return f();
    } catch (e) {
      return `error: ${(e as Error).message}`;
    }
  };
  return [run(() => ours(data)), run(() => theirs(data))];
}

const CASES: Array<[string, string, unknown]> = [
  [
    'each with @index, @first, @last and ../',
    '{{#each items}}{{@index}}{{#if @first}}F{{/if}}{{#if @last}}L{{/if}}={{this}}/{{../title}};{{/each}}',
    { title: 'T', items: ['a', 'b', 'c'] },
  ],
  ['each over an object with @key', '{{#each m}}{{@key}}:{{this}},{{/each}}', { m: { x: 1, y: 2 } }],
  ['each else on an empty list', '{{#each items}}x{{else}}none{{/each}}', { items: [] }],
  [
    'with, unless, else if',
    '{{#with a}}{{b}}{{/with}}{{#unless no}}U{{/unless}}{{#if no}}1{{else if yes}}2{{else}}3{{/if}}',
    { a: { b: 'B' }, no: false, yes: true },
  ],
  ['@root inside a block', '{{#each items}}{{@root.title}}{{/each}}', { title: 'R', items: [1, 2] }],
  ['subexpressions and hash arguments', '{{upper (upper name)}} {{#wrap}}in{{/wrap}}', { name: 'n' }],
  [
    'built-in lookup (it reads options.lookupProperty)',
    '{{lookup m "k"}} {{lookup list 1}} {{#with m}}{{lookup this "constructor"}}{{/with}}',
    { m: { k: 'v' }, list: ['a', 'b'] },
  ],
  [
    'inline partial with indentation, twice',
    '{{#*inline "p"}}x: {{v}}\ny: 2\n{{/inline}}top:\n  {{> p}}\n  {{> p v="h"}}\n',
    { v: 1 },
  ],
  ['registered partial with indentation', 'a:\n    {{> shared}}\n', { name: 'N' }],
  ['strict mode: a missing field', '{{#with a}}{{missing}}{{/with}}', { a: {} }],
  ['strict mode: a missing helper', '{{nohelper 1}}', {}],
  ['prototype properties are denied', '{{#with a}}{{constructor}}{{/with}}', { a: {} }],
  ['a prototype method is denied', '{{#with s}}{{toString}}{{/with}}', { s: 'x' }],
  ['nulls and falsy values', '[{{#if zero}}z{{/if}}{{#if empty}}e{{/if}}{{n}}]', { zero: 0, empty: '', n: null }],
];

for (const [name, source, data] of CASES) {
  t.test(name, async (t) => {
    const [ours, theirs] = both(source, data);
    t.equal(ours, theirs);
  });
}

t.test('a template renders the same when rendered again (helpers taken once, per-render state reset)', async (t) => {
  const hb = env();
  const source = '{{#*inline "p"}}<{{v}}>{{/inline}}{{#each xs}}{{> p v=this}}{{/each}}{{upper last}}';
  const ours = templateOf(specOf(source), hb);
  const theirs = hb.compile(source, OPTIONS);
  for (const data of [
    { xs: [1, 2], last: 'a' },
    { xs: [], last: 'b' },
    { xs: ['q'], last: 'c' },
  ])
    t.equal(ours(data), theirs(data));
});

t.test('a spec of another compiler revision is refused as Handlebars refuses it', async (t) => {
  const hb = env();
  const spec = specOf('x');
  spec.compiler = [99, '>= 9.0.0'];
  t.throws(() => templateOf(spec, hb), /newer version of Handlebars/);
});

t.test(
  'of the helpers engines register, only the built-in lookup reads options.lookupProperty (the one helper this runtime gives it)',
  async (t) => {
    const sources = [
      ...Object.values(TEMPLATE_FUNCTIONS),
      ...Object.values(ISTIO_TEMPLATE_FUNCTIONS),
      ...Object.values(SHARED_PLAN_RULES),
    ]
      .filter((f) => typeof f === 'function')
      .map((f) => String(f));
    t.ok(sources.length > 40, `${sources.length} helpers and plan rules read`);
    t.same(
      sources.filter((s) => s.includes('lookupProperty')),
      [],
    );
    t.match(String(Handlebars.create().helpers.lookup), /lookupProperty/, "Handlebars' lookup reads it");
  },
);
