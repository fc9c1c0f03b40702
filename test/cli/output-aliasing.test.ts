// Issue #36 §4, two outputs, one file: every pair of output flags (`--output-file`, `--report junit|sarif|github=PATH`,
// `diff -i` over the inputs it names) is given generated spellings of one file (through a symbolic link followed by
// `..`, `./`, `//`, an absolute path, a hard link, a name differing only in case for a file not there yet), and of a
// file the run reads (an input, stdin, `--config`, `--platform-config`). Each such run exits 2 naming both, writes
// nothing (the tree is byte for byte as before, no temporary left); outputs on distinct files are both written.
import t from 'tap';
import fc from 'fast-check';
import {
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CliIo } from '../../src/cli.ts';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 60);
const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: web:1}]}
`;
const CONFIG = 'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nspec: {mesh: istio}\n';

/** The tree every run starts from: `link` is `real/sub`, so `link/..` is `real` (as the kernel resolves it). */
function makeTree(): string {
  const dir = mkdtempSync(join(tmpdir(), 'alias-'));
  mkdirSync(join(dir, 'real/sub'), { recursive: true });
  symlinkSync('real/sub', join(dir, 'link'));
  writeFileSync(join(dir, 'in.yaml'), DEPLOYMENT);
  writeFileSync(join(dir, 'cfg.yaml'), CONFIG);
  writeFileSync(join(dir, 'values.yaml'), 'global: {hub: docker.io/istio}\n');
  writeFileSync(join(dir, 'real/existing.yaml'), 'old\n');
  linkSync(join(dir, 'real/existing.yaml'), join(dir, 'hard.yaml'));
  return dir;
}

/** Every entry under `dir`, links as links: path -> content or link target. */
function snapshot(dir: string, rel = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(join(dir, rel)).sort()) {
    const p = join(rel, name);
    const st = lstatSync(join(dir, p));
    if (st.isSymbolicLink()) out[p] = `-> ${readlinkSync(join(dir, p))}`;
    else if (st.isDirectory()) Object.assign(out, snapshot(dir, p));
    else out[p] = readFileSync(join(dir, p), 'utf8');
  }
  return out;
}

async function inProcess(
  argv: string[],
  cwd: string,
  stdin = '',
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { main } = await import('../../src/cli.ts');
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    stdin: Buffer.from(stdin),
    stdout: { write: (x: string) => out.push(x) },
    stderr: { write: (x: string) => err.push(x) },
    cwd,
    now: () => 0,
  };
  const code = await main(argv, {}, io);
  return { code, stdout: out.join(''), stderr: err.join('') };
}

/** Spellings of the folder `real` and of the tree's top, relative to the tree (or absolute: `@` is the tree). */
const REAL_DIR = [
  'real/',
  './real/',
  'real/./',
  'real//',
  'link/../',
  './link/../',
  'real/sub/../',
  'link/../sub/../',
  '@/real/',
  '@/link/../',
];
const TOP_DIR = ['', './', 'real/../', 'link/../../', '@/', '@/link/../../', 'real/sub/../../'];

/** A file of the tree and the spellings that name it. */
interface Target {
  name: string;
  spell: fc.Arbitrary<string>;
}
const caseOf = (name: string) => fc.constantFrom(name, name.toUpperCase(), name[0]!.toUpperCase() + name.slice(1));
const at = (dirs: string[], name: fc.Arbitrary<string>) =>
  fc.tuple(fc.constantFrom(...dirs), name).map(([d, n]) => d + n);
const TARGETS: Target[] = [
  {
    name: 'real/existing.yaml',
    spell: fc.oneof(at(REAL_DIR, fc.constant('existing.yaml')), at(TOP_DIR, fc.constant('hard.yaml'))),
  },
  { name: 'real/new.yaml', spell: at(REAL_DIR, caseOf('new.yaml')) },
  { name: 'fresh.xml', spell: at(TOP_DIR, caseOf('fresh.xml')) },
];
const INPUT = at(TOP_DIR, fc.constant('in.yaml'));
const CONFIG_FILE = at(TOP_DIR, fc.constant('cfg.yaml'));
const VALUES_FILE = at(TOP_DIR, fc.constant('values.yaml'));

/** The output flags of `inject`; `check` takes the `--report` ones. */
const OUTPUT_FLAGS = ['--output-file', '--report junit', '--report sarif', '--report github'] as const;
type OutputFlag = (typeof OUTPUT_FLAGS)[number];
const flagArgs = (flag: OutputFlag, path: string): string[] =>
  flag === '--output-file' ? ['--output-file', path] : ['--report', `${flag.slice(9)}=${path}`];
const labelOf = (flag: OutputFlag, path: string): string =>
  flag === '--output-file' ? `--output-file ${path}` : `--report ${flag.slice(9)}=${path}`;
const twoFlags = fc
  .tuple(fc.constantFrom(...OUTPUT_FLAGS), fc.constantFrom(...OUTPUT_FLAGS))
  .filter(([a, b]) => a !== b);
const abs = (dir: string, p: string) => p.replace(/^@/, dir);

t.test('two output flags naming one file, however spelled, are refused and nothing is written', async (t) => {
  await fc.assert(
    fc.asyncProperty(
      fc
        .nat(TARGETS.length - 1)
        .chain((i) => fc.tuple(fc.constant(TARGETS[i]!.name), TARGETS[i]!.spell, TARGETS[i]!.spell)),
      twoFlags,
      fc.boolean(),
      async ([, p1, p2], [f1, f2], check) => {
        if (check && (f1 === '--output-file' || f2 === '--output-file')) return;
        const dir = makeTree();
        try {
          const before = snapshot(dir);
          const [a, b] = [abs(dir, p1), abs(dir, p2)];
          const r = await inProcess(
            [...(check ? ['check'] : []), 'in.yaml', ...flagArgs(f1, a), ...flagArgs(f2, b)],
            dir,
          );
          t.equal(r.code, 2, `${f1} ${a} / ${f2} ${b}: exit 2`);
          t.equal(r.stdout, '', 'nothing on stdout');
          // --output-file is checked first, then the reports in command-line order.
          const [x, y] = f2 === '--output-file' ? [labelOf(f2, b), labelOf(f1, a)] : [labelOf(f1, a), labelOf(f2, b)];
          t.match(r.stderr, `${x} and ${y} are the same file`, 'names both outputs');
          t.same(snapshot(dir), before, 'no file written, no temporary left');
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      },
    ),
    { numRuns: RUNS },
  );
});

t.test(
  "an output naming a file the run reads (input, stdin, --config, --platform-config, a driver's file flag) is refused",
  async (t) => {
    const read = fc.oneof(
      INPUT.map((p) => ({ p, file: 'in', args: [p] as string[], label: `the input ${p}`, stdin: '' })),
      fc.constant({ p: 'in.yaml', file: 'in', args: ['-'], label: 'stdin', stdin: 'fd' }),
      CONFIG_FILE.map((p) => ({ p, file: 'cfg', args: ['in.yaml', '--config', p], label: `--config ${p}`, stdin: '' })),
      CONFIG_FILE.map((p) => ({
        p,
        file: 'cfg',
        args: ['in.yaml', '--platform-config', p],
        label: `--platform-config ${p}`,
        stdin: '',
      })),
      VALUES_FILE.map((p) => ({
        p,
        file: 'values',
        args: ['in.yaml', '--valuesFile', p],
        label: `--valuesFile ${p}`,
        stdin: '',
      })),
    );
    await fc.assert(
      fc.asyncProperty(
        read,
        INPUT,
        CONFIG_FILE,
        VALUES_FILE,
        fc.constantFrom(...OUTPUT_FLAGS),
        async (r0, inSpelling, cfgSpelling, valuesSpelling, flag) => {
          const dir = makeTree();
          try {
            const before = snapshot(dir);
            // The output names the read file by another spelling of it.
            const out = abs(dir, r0.file === 'in' ? inSpelling : r0.file === 'cfg' ? cfgSpelling : valuesSpelling);
            const { main } = await import('../../src/cli.ts');
            const err: string[] = [];
            const outs: string[] = [];
            const { openSync, closeSync } = await import('node:fs');
            const fd = r0.stdin === 'fd' ? openSync(join(dir, 'in.yaml'), 'r') : undefined;
            const args = r0.args.map((a) => abs(dir, a));
            const code = await main(
              [...args, ...flagArgs(flag, out)],
              {},
              {
                stdin: fd ?? Buffer.from(''),
                stdout: { write: (x: string) => outs.push(x) },
                stderr: { write: (x: string) => err.push(x) },
                cwd: dir,
                now: () => 0,
              },
            );
            if (fd !== undefined) closeSync(fd);
            t.equal(code, 2, `${args.join(' ')} ${labelOf(flag, out)}: exit 2`);
            t.equal(outs.join(''), '', 'nothing on stdout');
            t.match(
              err.join(''),
              `${labelOf(flag, out)} is ${r0.label.replace(r0.p, abs(dir, r0.p))} (the same file)`,
              'names the output and the file read',
            );
            t.same(snapshot(dir), before, 'no file written');
          } finally {
            rmSync(dir, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: RUNS },
    );
  },
);

t.test('outputs on distinct files are each written', async (t) => {
  const pair = fc
    .tuple(fc.nat(TARGETS.length - 1), fc.nat(TARGETS.length - 1))
    .filter(([i, j]) => i !== j)
    .chain(([i, j]) =>
      fc.tuple(fc.constant([TARGETS[i]!.name, TARGETS[j]!.name]), TARGETS[i]!.spell, TARGETS[j]!.spell),
    );
  await fc.assert(
    fc.asyncProperty(pair, twoFlags, async ([[n1, n2], p1, p2], [f1, f2]) => {
      const dir = makeTree();
      try {
        const r = await inProcess(['in.yaml', ...flagArgs(f1, abs(dir, p1)), ...flagArgs(f2, abs(dir, p2))], dir);
        t.equal(r.code, 0, `${f1} ${p1} / ${f2} ${p2}: exit 0 (${r.stderr})`);
        const expect = (f: OutputFlag) =>
          f === '--output-file'
            ? /kind: Deployment[\s\S]*istio-proxy/
            : f === '--report junit'
              ? /<testsuites/
              : f === '--report sarif'
                ? /"\$schema"/
                : /^(?!old\n$)/;
        // Read by the name written (not normalised as text: the kernel resolves `link/..`); a write through a hard
        // link replaces that name (a rename), as `sed -i` does.
        const byName = (p: string) => readFileSync(p.startsWith('@') ? abs(dir, p) : `${dir}/${p}`, 'utf8');
        t.match(byName(p1), expect(f1), `${n1} (${p1}) holds the ${f1} output`);
        t.match(byName(p2), expect(f2), `${n2} (${p2}) holds the ${f2} output`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }),
    { numRuns: Math.ceil(RUNS / 2) },
  );
});

t.test('diff -i over two names of one file is refused and the file is left as it was', async (t) => {
  await fc.assert(
    fc.asyncProperty(INPUT, INPUT, async (p1, p2) => {
      const dir = makeTree();
      try {
        const before = snapshot(dir);
        const [a, b] = [abs(dir, p1), abs(dir, p2)];
        const r = await inProcess(['diff', '-i', a, b], dir);
        t.equal(r.code, 2, `diff -i ${a} ${b}: exit 2`);
        t.match(r.stderr, 'are the same file', 'says why');
        t.same(snapshot(dir), before, 'no file written');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }),
    { numRuns: Math.ceil(RUNS / 2) },
  );
});

t.test('trailing slashes, . and .. name a directory: refused before anything is read', async (t) => {
  const dir = makeTree();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const p of ['new.yaml/', 'real/.', 'link/..', '.']) {
    const r = await inProcess(['in.yaml', '--output-file', p], dir);
    t.equal(r.code, 2, `--output-file ${p}: exit 2`);
    t.match(r.stderr, `--output-file ${p}: names a directory`);
  }
});
