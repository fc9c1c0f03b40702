import t from 'tap';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface Gen {
  generate: (root?: string) => string;
  composeSchemas: (root?: string) => Record<string, unknown>;
  schemaText: (schema: unknown) => string;
  driverFragments: (root?: string) => Array<{ name: string }>;
}
const gen = (await import(new URL('../../scripts/gen-validators.mjs', import.meta.url).href)) as Gen;

t.test('src/config/validators.gen.js matches the composed schemas (run node scripts/gen-validators.mjs)', async (t) => {
  const committed = readFileSync(new URL('../../src/config/validators.gen.js', import.meta.url), 'utf8');
  t.ok(committed === gen.generate(ROOT), 'generated validators are fresh');
});

t.test(
  'schemas/*.schema.json are the core schemas plus every driver section (run node scripts/gen-validators.mjs)',
  async (t) => {
    for (const [file, schema] of Object.entries(gen.composeSchemas(ROOT))) {
      const committed = readFileSync(new URL(`../../schemas/${file}`, import.meta.url), 'utf8');
      t.ok(committed === gen.schemaText(schema), `schemas/${file} is fresh`);
    }
  },
);

t.test('every registered driver with settings has a schema fragment, and every fragment a driver', async (t) => {
  const { DRIVERS } = await import('../../src/drivers/registry.ts');
  const fragments = gen.driverFragments(ROOT).map((f) => f.name);
  for (const f of fragments)
    t.ok(
      DRIVERS.some((d) => d.name === f),
      `src/drivers/${f}/config.schema.json belongs to a registered driver`,
    );
});

t.test('the generated validators need no Ajv at run time', async (t) => {
  const code = readFileSync(new URL('../../src/config/validators.gen.js', import.meta.url), 'utf8');
  t.notMatch(code, /\brequire\(|from\s*["']ajv/, 'no runtime import of ajv');
  const mod = (await import('../../src/config/validators.gen.js')) as Record<string, unknown>;
  t.same(Object.keys(mod).sort(), ['validateConfigMap', 'validateSidecarInjection']);
});
