/**
 * Issue #22: the core names no mesh, and imports follow the layering of the README's "Reading the code"
 * (scripts/boundary.ts). The rules are also tried on sources written to break them, so that the check cannot
 * pass by finding nothing.
 */
import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { layeringRule, layeringViolations, meshNamesInCore } from '../../scripts/boundary.ts';
import { sourceFiles } from '../../scripts/long-functions.ts';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

t.test('no code line outside src/drivers/<mesh>/, the registry and src/index.ts names a mesh', async (t) => {
  const files = sourceFiles(SRC);
  t.ok(
    files.some((f) => f.endsWith('pipeline.ts')) && files.some((f) => f.includes('/drivers/istio/')),
    'the check reads the sources',
  );
  t.same(
    meshNamesInCore(SRC, files).map((h) => `src/${h.file}:${h.line}: ${h.text}`),
    [],
  );
});

t.test(
  'imports follow the layering: core and engines import no driver nor the CLI, no two folders import each other',
  async (t) => {
    t.same(
      layeringViolations(SRC, sourceFiles(SRC)).map((v) => `src/${v.file}:${v.line} imports ${v.target}: ${v.rule}`),
      [],
    );
  },
);

t.test('the check finds what breaks the rules', async (t) => {
  const dir = t.testdir({});
  const write = (path: string, text: string): void => {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  };
  write(
    'pipeline.ts',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the text of a source file holding a template literal, written into a test file
    "// Istio in a comment is fine\n/** and linkerd in a doc comment */\nexport const a = 'sidecar.istio.io/inject';\nexport const b = `x\n${1} osm-system`;\n",
  );
  write('drivers/kuma/index.ts', "export const name = 'kuma';\n");
  write('drivers/registry.ts', "import { name } from './kuma/index.ts';\nexport const DRIVERS = [name, 'consul'];\n");
  write('index.ts', "export { DRIVERS } from './drivers/registry.ts';\n");
  const files = ['pipeline.ts', 'drivers/kuma/index.ts', 'drivers/registry.ts', 'index.ts'].map((f) => join(dir, f));
  t.same(
    meshNamesInCore(dir, files).map((h) => `${h.file}:${h.line}`),
    ['pipeline.ts:3', 'pipeline.ts:5'],
    'code lines only, in core files only',
  );

  write(
    'selection/a.ts',
    "import { x } from '../drivers/registry.ts';\nimport type { Y } from '../cli/args.ts';\nexport const z = import('../drivers/kuma/index.ts');\n",
  );
  write(
    'render/gotemplate/exec.ts',
    "import { NoPlan } from '../plan-values.ts';\nimport { m } from '../../selection/a.ts';\n",
  );
  write('config/load.ts', "export { z } from '../patch/b.ts';\n");
  write('patch/b.ts', "import '../config/load.ts';\nexport const z = 1;\n");
  const got = layeringViolations(
    dir,
    ['selection/a.ts', 'render/gotemplate/exec.ts', 'config/load.ts', 'patch/b.ts'].map((f) => join(dir, f)),
  ).map((v) => `${v.file}:${v.line} ${v.rule}`);
  t.same(got.sort(), [
    'config/load.ts:1 folders import each other: config, patch',
    'patch/b.ts:1 folders import each other: config, patch',
    'render/gotemplate/exec.ts:1 the Go template engine imports the sidecar plans',
    'render/gotemplate/exec.ts:2 a template engine imports selection',
    'selection/a.ts:1 core imports drivers',
    'selection/a.ts:2 core imports cli',
    'selection/a.ts:3 core imports drivers',
  ]);
  t.equal(layeringRule('pipeline.ts', 'contract/driver.ts'), undefined, 'the core may import the driver contract');
  t.equal(
    layeringRule('drivers/istio/index.ts', 'selection/label-selector.ts'),
    undefined,
    'a driver may import the core',
  );
  t.equal(layeringRule('run.ts', 'drivers/registry.ts'), undefined, 'the composition root binds the registry');
  t.equal(layeringRule('run/config.ts', 'drivers/registry.ts'), undefined, 'and so does its folder, run/');
  t.match(
    layeringRule('pipeline/workload.ts', 'run.ts'),
    /core imports the composition root/,
    'the folder pipeline/ is core',
  );
  t.match(layeringRule('render/engine.ts', 'contract/driver.ts'), /template engine imports contract/);
});

t.test('the YAML stages import one way: edit/ → yaml/read/, yaml/emit/ → yaml/scalars.ts', async (t) => {
  const may: Array<[string, string]> = [
    ['edit/rewrite.ts', 'yaml/read/text-node.ts'],
    ['edit/text-edit.ts', 'yaml/emit/emit-block.ts'],
    ['yaml/read/scan.ts', 'yaml/scalars.ts'],
    ['yaml/emit/emit-block.ts', 'yaml/scalars.ts'],
    ['yaml/read/fragment-reader.ts', 'yaml/read/scan.ts'],
    ['yaml/read/scan.ts', 'model.ts'],
  ];
  for (const [from, to] of may) t.equal(layeringRule(from, to), undefined, `${from} may import ${to}`);
  const mayNot: Array<[string, string, RegExp]> = [
    ['yaml/read/readers.ts', 'edit/flow-edit.ts', /a YAML reader imports the editor/],
    ['yaml/emit/emit-block.ts', 'edit/text-edit.ts', /the YAML emitter imports the editor/],
    ['yaml/scalars.ts', 'edit/read-back.ts', /scalar rules import the editor/],
    ['yaml/read/scan.ts', 'yaml/emit/emit-block.ts', /a YAML reader imports the emitter/],
    ['yaml/emit/emit-block.ts', 'yaml/read/readers.ts', /the YAML emitter imports a reader/],
    ['yaml/scalars.ts', 'yaml/read/scan.ts', /scalar rules import the readers/],
    ['yaml/scalars.ts', 'yaml/emit/emit-block.ts', /scalar rules import the emitter/],
  ];
  for (const [from, to, why] of mayNot) t.match(layeringRule(from, to), why, `${from} may not import ${to}`);
});
