import t from 'tap';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

t.test('src/config/validators.gen.js matches schemas/*.schema.json (run node scripts/gen-validators.mjs)', async (t) => {
  const { generate } = (await import(new URL('../scripts/gen-validators.mjs', import.meta.url).href)) as { generate: (root?: string) => string };
  const committed = readFileSync(new URL('../src/config/validators.gen.js', import.meta.url), 'utf8');
  t.ok(committed === generate(ROOT), 'generated validators are fresh');
});

t.test('the generated validators need no Ajv at run time', async (t) => {
  const code = readFileSync(new URL('../src/config/validators.gen.js', import.meta.url), 'utf8');
  t.notMatch(code, /\brequire\(|from\s*["']ajv/, 'no runtime import of ajv');
  const mod = (await import('../src/config/validators.gen.js')) as Record<string, unknown>;
  t.same(Object.keys(mod).sort(), ['validateConfigMap', 'validateSidecarInjection']);
});
