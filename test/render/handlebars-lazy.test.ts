import t from 'tap';
import { createRequire } from 'node:module';
import Handlebars from 'handlebars';
import { PRECOMPILED } from '../../src/drivers/templates-precompiled.gen.js';
import { TEMPLATE_FUNCTIONS } from '../../src/render/template-functions.ts';

// src/render/handlebars-lazy.cjs stands in for `handlebars` in the CLI bundle (runtime first, compiler on
// first use): its environments must render and fail exactly as real Handlebars environments do.
const require = createRequire(import.meta.url);
const Lazy = require('../../src/render/handlebars-lazy.cjs') as typeof Handlebars;

function envs(): Array<[string, typeof Handlebars]> {
  return [
    ['handlebars', Handlebars.create()],
    ['lazy', Lazy.create()],
  ];
}

function outcome(f: () => string): string {
  try {
    return `ok ${JSON.stringify(f())}`;
  } catch (e) {
    return `throws ${(e as Error).message}`;
  }
}

t.test('compile: same output and errors as Handlebars, helpers of the environment', async (t) => {
  const cases: Array<[string, unknown]> = [
    ['a: {{up x}}\n{{#each l}}- {{this}}\n{{/each}}', { x: 'hi', l: [1, 2] }],
    ['{{#if x}}yes{{else}}no{{/if}} {{{y}}} {{y}}', { x: 0, y: '<&>' }],
    ['{{missing}}', {}],
    ['{{#with constructor}}{{name}}{{/with}}', {}],
    ['{{#if}}', {}],
  ];
  for (const [source, data] of cases) {
    const got = envs().map(([name, env]) => {
      env.registerHelper('up', (s: unknown) => String(s).toUpperCase());
      return [name, outcome(() => env.compile(source, { strict: true, noEscape: true })(data))];
    });
    t.equal(got[1]![1], got[0]![1], `${JSON.stringify(source)}: ${got[0]![1]}`);
  }
  t.equal(
    Lazy.create().precompile('b: {{y}}', { strict: true }),
    Handlebars.precompile('b: {{y}}', { strict: true }),
    'precompile',
  );
});

t.test('built-in precompiled templates render the same through the runtime-only environment', async (t) => {
  const data = { name: 'x' }; // strict mode: each template fails on its first missing field, the same way
  for (const [name, pre] of Object.entries(PRECOMPILED)) {
    const got = envs().map(([, env]) => {
      for (const [h, fn] of Object.entries(TEMPLATE_FUNCTIONS)) env.registerHelper(h, fn as Handlebars.HelperDelegate);
      return outcome(() => env.template(pre.spec)(data));
    });
    t.equal(got[1], got[0], name);
  }
});
