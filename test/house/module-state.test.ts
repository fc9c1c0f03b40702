/**
 * Issue #35 item 4: run state is a value (src/render/run-state.ts), not module state. No source file outside the
 * CLI edge (`src/cli.ts`, `src/cli/`) keeps a top-level `let`/`var`, or a top-level container it changes, unless
 * its doc comment says `Module state by design: ...` (a pure memo, a mark on immutable objects, the dynamic extent
 * of one render). scripts/module-state.ts lists them; this keeps the rule, and tries the scan on sources written
 * to break it so that it cannot pass by finding nothing.
 */
import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { coreFiles, moduleState, moduleStateOf } from '../../scripts/module-state.ts';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

t.test('no module-level mutable state in src/ outside the CLI edge, except what says why', async (t) => {
  const files = coreFiles(SRC);
  t.ok(
    files.some((f) => f.endsWith('/render/budget.ts')) && !files.some((f) => /\/cli(\.ts|\/)/.test(f)),
    'the scan reads the core and leaves out the CLI edge',
  );
  const found = moduleState(files);
  t.ok(
    found.some((f) => f.exempt && f.file.endsWith('/render/run-state.ts')),
    'the run in force is the one slot of run state, and says why',
  );
  t.same(
    found.filter((f) => !f.exempt).map((f) => `${f.file}:${f.line} ${f.name}: ${f.why}`),
    [],
  );
});

t.test('the scan finds each kind of module state', async (t) => {
  const text = [
    'let counter = 0;',
    'export var total = 1;',
    'const cache = new Map<string, number>();',
    'const seen = new Set<string>();',
    'const list: number[] = [];',
    'const settings = { on: true };',
    'const nested = { a: { b: 1 } };',
    'const table = new Map([["a", 1]]);',
    'const frozen = Object.freeze({ a: 1 });',
    'const marks = new WeakMap<object, number>() as WeakMap<object, number>;',
    'const byKey: Record<string, number> = {};',
    'export function f(k: string): number {',
    '  cache.set(k, 1);',
    '  seen.add(k);',
    '  list.push(1);',
    '  settings.on = false;',
    '  nested.a.b++;',
    '  marks.set({}, 1);',
    '  Object.assign(byKey, { k: 1 });',
    '  return table.get(k) ?? frozen.a;',
    '}',
    '',
  ].join('\n');
  t.same(
    moduleStateOf('x.ts', text).map((f) => `${f.line} ${f.name} ${f.why.replace(/ at line \d+/, '')}`),
    [
      '1 counter let',
      '2 total var',
      '3 cache .set()',
      '4 seen .add()',
      '5 list .push()',
      '6 settings an assignment',
      '7 nested an increment',
      '10 marks .set()',
      '11 byKey Object.assign()',
    ],
    'every changed container and every let/var; a table only read, and a frozen object, are not state',
  );
  t.same(
    moduleStateOf(
      'y.ts',
      '/**\n * A memo.\n * Module state by design: keyed by immutable inputs.\n */\nconst memo = new Map();\nexport const g = (k: string) => memo.set(k, 1);\n',
    ).map((f) => `${f.name} ${f.exempt === true}`),
    ['memo true'],
    'a declaration whose doc comment says why is listed as exempt',
  );
});

t.test('a planted module state in a core file fails the rule; the same in the CLI edge does not', async (t) => {
  const dir = t.testdir({});
  const write = (path: string, text: string): void => {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  };
  write('render/meter.ts', 'let used = 0;\nexport function spend(n: number): void {\n  used += n;\n}\n');
  write(
    'pipeline/cache.ts',
    'const byName = new Map<string, string>();\nexport const put = (k: string) => byName.set(k, k);\n',
  );
  write('cli/session.ts', 'let current: string | undefined;\nexport const set = (s: string) => { current = s; };\n');
  write('cli.ts', 'const argv: string[] = [];\nexport const add = (a: string) => argv.push(a);\n');
  const open = moduleState(coreFiles(dir))
    .filter((f) => !f.exempt)
    .map((f) => `${f.file.slice(dir.length + 1)}:${f.line} ${f.name}`);
  t.same(open, ['pipeline/cache.ts:1 byName', 'render/meter.ts:1 used']);
});
