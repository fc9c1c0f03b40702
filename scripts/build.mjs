// Generates the template and functionConfig-validator modules, then bundles src/cli.ts into dist/meshinject.js (one file, fast start-up).
import { writeFileSync } from 'node:fs';
import { build } from 'esbuild';
import { writeAll as writeTemplates } from './gen-templates.mjs';
import { generate as generateValidators } from './gen-validators.mjs';

writeTemplates();
writeFileSync('src/config/validators.gen.js', generateValidators());
await build({
  entryPoints: ['src/cli.ts'],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  outfile: 'dist/meshinject.js',
  banner: { js: "import { createRequire as __miCreateRequire } from 'node:module'; const require = __miCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});
