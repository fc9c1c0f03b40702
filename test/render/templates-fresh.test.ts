import t from 'tap';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderTemplate } from '../../src/render/engine.ts';
import { PRECOMPILED } from '../../src/drivers/templates-precompiled.gen.js';
import { TEMPLATES } from '../../src/drivers/templates.gen.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

t.test('the bundled template modules match src/drivers/*/templates/*.hbs (run npm run build)', async (t) => {
  const gen = (await import(new URL('../../scripts/gen-templates.mjs', import.meta.url).href)) as {
    generate: (root?: string) => string;
    generatePrecompiled: (root?: string) => string;
  };
  t.ok(
    readFileSync(new URL('../../src/drivers/templates.gen.ts', import.meta.url), 'utf8') === gen.generate(ROOT),
    'templates.gen.ts is fresh',
  );
  t.ok(
    readFileSync(new URL('../../src/drivers/templates-precompiled.gen.js', import.meta.url), 'utf8') ===
      gen.generatePrecompiled(ROOT),
    'templates-precompiled.gen.js is fresh',
  );
});

t.test('every built-in template ships precompiled; others compile on demand, in strict mode', async (t) => {
  t.same(Object.keys(PRECOMPILED).sort(), Object.keys(TEMPLATES).sort());
  const tiny = 'a: {{x}}\n';
  t.equal(
    renderTemplate('test/tiny', tiny, { x: 1 }),
    'a: 1\n',
    'a template that is not precompiled is compiled on demand',
  );
  t.throws(
    () => renderTemplate('test/strict', '{{missing}}', {}),
    /test\/strict/,
    'strict mode: a missing field names the template',
  );
});
