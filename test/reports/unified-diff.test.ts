// `meshinject diff` builds its hunks from the edits the run made (src/reports/unified-diff.ts). Every diff here is
// applied with the real GNU `patch -p1` and `git apply` to a copy of the old files, and the files must then equal
// what injection writes: over the examples, the real-world apps and the conformance corpora of the test data (as streams and
// as ResourceLists, whose results are appended at the end), and random edits of random texts. Hunk headers are
// compared with GNU `diff -u` where the change is unambiguous; paths with git's own quoting.
import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import fc from 'fast-check';
import { quotePath, unifiedDiffPieces, type TextEdit } from '../../src/reports/unified-diff.ts';
import { runInputs } from '../../src/run.ts';
import { buildResourceList } from '../../scripts/conformance/runner.ts';
import { ROOT, runCli, workspace } from '../helpers/e2e.ts';
import { corpus, DATA_ROOT, needs } from '../helpers/data.ts';

const CONFORMANCE = corpus('conformance');
const REAL_WORLD = corpus('real-world');

/** One file of a patch check: its old text, the edits, and the new text the patched file must equal. */
interface Case {
  path: string;
  before: string;
  edits: readonly TextEdit[];
  after: string;
}

/** Applies `edits` to `text` (the meaning of a `TextEdit`), independently of the module under test. */
function applyEdits(text: string, edits: readonly TextEdit[]): string {
  const sorted = [...edits].sort((a, b) => a.start - b.start || a.end - b.end);
  let out = '';
  let at = 0;
  for (const e of sorted) {
    out += text.slice(at, e.start) + e.text;
    at = e.end;
  }
  return out + text.slice(at);
}

/**
 * Writes every case's old text under two copies of a folder, builds one diff of them all, applies it with
 * `patch -p1` to one copy and `git apply` to the other, and checks each file equals its new text.
 */
function checkApplies(t: Test, cases: readonly Case[], label: string): string {
  const dir = workspace(t, {}, 'udiff');
  const diff = cases.flatMap((c) => unifiedDiffPieces(c.path, c.before, c.edits)).join('');
  writeFileSync(join(dir, 'all.patch'), diff);
  for (const copy of ['p', 'g']) {
    for (const c of cases) {
      mkdirSync(dirname(join(dir, copy, c.path)), { recursive: true });
      writeFileSync(join(dir, copy, c.path), c.before);
    }
  }
  const patch = spawnSync('patch', ['-p1', '-s', '-f', '--no-backup-if-mismatch', '-i', join(dir, 'all.patch')], {
    cwd: join(dir, 'p'),
    encoding: 'utf8',
  });
  t.equal(patch.status, 0, `${label}: patch -p1 applies the diff: ${patch.stdout}${patch.stderr}`);
  const git = spawnSync('git', ['apply', '--unidiff-zero', join(dir, 'all.patch')], {
    cwd: join(dir, 'g'),
    encoding: 'utf8',
  });
  t.equal(git.status, 0, `${label}: git apply applies the diff: ${git.stderr}`);
  let wrong = 0;
  for (const c of cases) {
    for (const copy of ['p', 'g']) {
      const got = readFileSync(join(dir, copy, c.path), 'utf8');
      if (got !== c.after && wrong++ < 5)
        t.fail(`${label}: ${copy === 'p' ? 'patch' : 'git apply'} gives ${c.path} other than the injected output`);
    }
  }
  t.equal(wrong, 0, `${label}: ${cases.length} file(s), each patched equal to the injected output`);
  return diff;
}

/** The patch cases of one run of meshinject: each input file with the edits of its output. */
function runCases(inputs: Array<{ name: string; text: string }>, functionConfig?: string): Case[] {
  const out = runInputs(inputs, functionConfig !== undefined ? { functionConfig } : {});
  if (out.exitCode !== 0) return [];
  return out.files.map((f) => ({ path: f.name!, before: f.input, edits: f.edits, after: f.output }));
}

/** Every *.yaml / *.yml / *.json file under `dir`, as paths relative to `root` (the repository or the data root). */
function yamlFiles(dir: string, root = ROOT): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name.startsWith('.')) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...yamlFiles(p, root));
    else if (/\.(ya?ml|json)$/.test(e.name)) out.push(relative(root, p));
  }
  return out.sort();
}

t.test(
  'conformance corpora (Istio, Linkerd, Kuma; every fifth case of each Istio release): each case as a stream and as a ResourceList, patched, equals the output',
  needs(CONFORMANCE),
  async (t) => {
    const conformance = CONFORMANCE.path ?? '';
    const dirs = [
      'istio/cases',
      'linkerd/cases',
      'kuma/cases',
      ...readdirSync(join(conformance, 'istio-versions'))
        .filter((v) => /^\d/.test(v))
        .map((v) => `istio-versions/${v}/cases`),
    ];
    const cases: Case[] = [];
    let changed = 0;
    for (const d of dirs) {
      const base = join(conformance, d);
      if (!existsSync(base)) continue;
      // The release corpora repeat the same shapes release after release: every fifth case of each is enough here.
      for (const [k, name] of readdirSync(base).sort().entries()) {
        if (d.startsWith('istio-versions/') && k % 5 !== 0) continue;
        const input = join(base, name, 'input.yaml');
        const fnConfig = join(base, name, 'fn-config.yaml');
        if (!existsSync(input) || !existsSync(fnConfig)) continue;
        const text = readFileSync(input, 'utf8');
        const config = readFileSync(fnConfig, 'utf8');
        const path = relative(DATA_ROOT, input);
        const found = [
          ...runCases([{ name: path, text }], config),
          ...runCases([{ name: `${path}.rl.yaml`, text: buildResourceList(text, config) }]),
        ];
        changed += found.filter((c) => c.after !== c.before).length;
        cases.push(...found);
      }
    }
    t.ok(changed >= 150, `most cases change their input (${changed} of ${cases.length})`);
    checkApplies(t, cases, 'conformance');
  },
);

/**
 * The patch cases of whole apps, each one run (`dir` relative to `root`, a folder or one file); file names are
 * relative to `root`.
 */
function appCases(t: Test, root: string, apps: Array<[string, string | undefined]>): Case[] {
  const cases: Case[] = [];
  for (const [dir, config] of apps) {
    const files = (dir.endsWith('.yaml') ? [dir] : yamlFiles(join(root, dir), root)).filter(
      (f) => f !== config && !/kustomization\.ya?ml$|Kptfile$/.test(f),
    );
    const inputs = files.map((name) => ({ name, text: readFileSync(join(root, name), 'utf8') }));
    const found = runCases(
      inputs.filter((i) => /^(apiVersion|kind|#|---)/m.test(i.text)),
      config && readFileSync(join(root, config), 'utf8'),
    );
    t.ok(
      found.some((c) => c.after !== c.before),
      `${dir}: something is injected`,
    );
    cases.push(...found);
  }
  return cases;
}

t.test('examples: the diff of every file, patched, equals the output', async (t) => {
  checkApplies(
    t,
    appCases(t, ROOT, [
      ['examples/shop', 'examples/shop/injection.yaml'],
      ['examples/osm', undefined],
    ]),
    'examples',
  );
});

t.test(
  'real-world apps of the test data: the diff of every file, patched, equals the output',
  needs(REAL_WORLD),
  async (t) => {
    // Each entry is one app (one run): podinfo's base and its rendered overlay are the same resources, so two runs.
    const apps: Array<[string, string | undefined]> = [
      ['real-world/bookinfo', undefined],
      ['real-world/online-boutique', undefined],
      ['real-world/podinfo/bases', undefined],
      ['real-world/podinfo/production.rendered.yaml', undefined],
    ];
    checkApplies(t, appCases(t, DATA_ROOT, apps), 'real-world');
  },
);

/** Random texts (line breaks, CRLF, a missing final line break, empty lines) and random edits of them. */
const textAndEdits = fc
  .tuple(
    fc.array(fc.constantFrom('a', 'b', 'key: v', '', '  - x', 'c\r'), { minLength: 0, maxLength: 30 }),
    fc.boolean(),
    fc.array(
      fc.tuple(fc.nat(), fc.nat(6), fc.constantFrom('', 'X', 'new\n', '\nz', 'p\nq\n', 'a\n', '\r\n', 'key: w')),
      { maxLength: 6 },
    ),
  )
  .map(([lines, finalBreak, raw]) => {
    const before = lines.join('\n') + (finalBreak && lines.length > 0 ? '\n' : '');
    // Non-overlapping edits: sorted starts, each ending before the next starts.
    const spots = raw
      .map(([at, len, text]) => ({ at: before.length === 0 ? 0 : at % (before.length + 1), len, text }))
      .sort((a, b) => a.at - b.at);
    const edits: TextEdit[] = [];
    let free = 0;
    for (const s of spots) {
      if (s.at < free) continue;
      const end = Math.min(before.length, s.at + s.len);
      edits.push({ start: s.at, end, text: s.text });
      free = end + 1;
    }
    return { before, edits };
  });

t.test('random edits of random texts: patch and git apply give the edited text', async (t) => {
  const samples = fc.sample(textAndEdits, 300);
  const cases = samples
    .map((s, i) => ({ path: `r/${i}.txt`, before: s.before, edits: s.edits, after: applyEdits(s.before, s.edits) }))
    .filter((c) => c.after !== c.before && c.before.length > 0 && c.after.length > 0);
  t.ok(cases.length > 150, `${cases.length} changed files`);
  checkApplies(t, cases, 'random');
  const orderMatters = cases.filter(
    (c) =>
      unifiedDiffPieces(c.path, c.before, [...c.edits].reverse()).join('') !==
      unifiedDiffPieces(c.path, c.before, c.edits).join(''),
  );
  t.same(
    orderMatters.map((c) => c.path),
    [],
    'the order of the edits does not matter',
  );
});

t.test('hunks as GNU diff -u writes them: context 3, merged when 6 lines or fewer apart', async (t) => {
  const lines = Array.from({ length: 40 }, (_, i) => `line ${i + 1}\n`);
  const before = lines.join('');
  const at = (n: number) => lines.slice(0, n - 1).join('').length;
  const replace = (n: number, text: string): TextEdit => ({ start: at(n), end: at(n + 1), text });
  const shapes: Array<[string, TextEdit[]]> = [
    ['one line replaced', [replace(10, 'changed 10\n')]],
    ['7 lines apart: two hunks', [replace(10, 'c10\n'), replace(17, 'c17\n')]],
    ['6 lines apart: one hunk', [replace(10, 'c10\n'), replace(16, 'c16\n')]],
    ['insertion at the top', [{ start: 0, end: 0, text: 'top\n' }]],
    ['insertion at the end', [{ start: before.length, end: before.length, text: 'end 1\nend 2\n' }]],
    ['first line removed', [replace(1, '')]],
    ['last line removed', [replace(40, '')]],
    ['lines inserted mid-line', [{ start: at(20) + 4, end: at(20) + 4, text: ' one\nnew two\nnew' }]],
    ['adjacent lines replaced', [replace(5, 'c5\n'), replace(6, 'c6\n'), replace(7, '')]],
  ];
  const dir = workspace(t, { 'old.txt': before }, 'udiff-gnu');
  for (const [label, edits] of shapes) {
    writeFileSync(join(dir, 'new.txt'), applyEdits(before, edits));
    const gnu = spawnSync('diff', ['-u', 'old.txt', 'new.txt'], { cwd: dir, encoding: 'utf8' })
      .stdout.split('\n')
      .slice(2)
      .join('\n');
    const ours = unifiedDiffPieces('f.txt', before, edits).join('').split('\n').slice(3).join('\n');
    t.equal(ours, gnu, label);
  }
  const noBreak = 'a\nb\nc';
  writeFileSync(join(dir, 'old.txt'), noBreak);
  writeFileSync(join(dir, 'new.txt'), 'a\nb\nC\n');
  const gnu = spawnSync('diff', ['-u', 'old.txt', 'new.txt'], { cwd: dir, encoding: 'utf8' })
    .stdout.split('\n')
    .slice(2)
    .join('\n');
  t.equal(
    unifiedDiffPieces('f', noBreak, [{ start: 4, end: 5, text: 'C\n' }])
      .join('')
      .split('\n')
      .slice(3)
      .join('\n'),
    gnu,
    'a last line without a line break is marked',
  );
  t.same(unifiedDiffPieces('f', before, [{ start: 3, end: 5, text: 'e ' }]), [], 'edits that change nothing: no diff');
});

t.test('paths are quoted as git quotes them (core.quotePath), and a name cannot forge headers', async (t) => {
  const names = [
    'plain.yaml',
    'sp ace.yaml',
    'new\nline.yaml',
    'quo"te.yaml',
    'back\\slash.yaml',
    'tab\t.yaml',
    'caf\u00e9.yaml',
    '\u0001ctl.yaml',
    'del\u007f.yaml',
    'cr\r.yaml',
    'bell\u0007.yaml',
  ];
  const dir = workspace(t, {}, 'udiff-git');
  const git = (...args: string[]) =>
    spawnSync('git', ['-c', 'core.quotePath=true', ...args], { cwd: dir, encoding: 'utf8' });
  git('init', '-q');
  for (const n of names) writeFileSync(join(dir, n), 'x\n');
  git('add', '-A');
  for (const n of names) writeFileSync(join(dir, n), 'y\n');
  const gitHeaders = git('diff', '--no-color')
    .stdout.split('\n')
    .filter((l) => l.startsWith('diff --git') || l.startsWith('--- ') || l.startsWith('+++ '));
  const ours = [...names].map((n) =>
    unifiedDiffPieces(n, 'x\n', [{ start: 0, end: 1, text: 'y' }])[0]!
      .replace(/\n$/, '')
      .split('\n'),
  );
  // git sorts by name (bytes): compare the header lines as sets, each name's three lines together.
  const oursSorted = ours.sort((a, b) => Buffer.compare(Buffer.from(a[0]!), Buffer.from(b[0]!))).flat();
  t.same(new Set(oursSorted), new Set(gitHeaders), 'the same header lines as git diff');
  t.equal(quotePath('a/new\nline'), '"a/new\\nline"');
  t.equal(quotePath('a/\u00e9'), '"a/\\303\\251"');

  // Attack: a manifest whose name forges `--- /dev/null` / `+++ b/pwned.txt` headers when printed raw.
  const forged = 'app.yaml\n--- /dev/null\n+++ b/pwned.txt\n@@ -0,0 +1 @@\n+pwned.yaml';
  const deployment =
    'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - name: web\n        image: nginx\n';
  const ws = workspace(t, { [`m/${forged}`]: deployment }, 'udiff-forge');
  const d = runCli(['diff', 'm'], { cwd: ws });
  t.equal(d.status, 1, `changes: exit 1 (${d.stderr})`);
  t.notMatch(d.stdout, /^\+\+\+ b\/pwned\.txt$/m, 'no forged header line');
  t.equal(d.stdout.split('\n').filter((l) => l.startsWith('+++ ')).length, 1, 'one +++ header for one file');
  const patched = spawnSync('patch', ['-p1', '-s', '-f', '--no-backup-if-mismatch'], {
    cwd: ws,
    input: d.stdout,
    encoding: 'utf8',
  });
  t.equal(patched.status, 0, `patch -p1 applies it: ${patched.stdout}${patched.stderr}`);
  t.notOk(existsSync(join(ws, 'pwned.txt')), 'patch created no pwned.txt');
  t.match(readFileSync(join(ws, 'm', forged), 'utf8'), /istio-proxy/, 'the named file is the one patched');
});

t.test('linear: the diff of 500 injected workloads takes less time than injecting them', async (t) => {
  const doc = (i: number) =>
    `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: w${i}\n  namespace: shop\nspec:\n  selector: {matchLabels: {app: w${i}}}\n  template:\n    metadata:\n      labels: {app: w${i}}\n    spec:\n      containers:\n      - name: app\n        image: nginx\n        ports:\n        - containerPort: 8080\n`;
  const text = Array.from({ length: 500 }, (_, i) => doc(i)).join('---\n');
  const started = performance.now();
  const out = runInputs([{ name: 'big.yaml', text }]);
  const injecting = performance.now() - started;
  t.equal(out.exitCode, 0);
  const diffStarted = performance.now();
  const pieces = unifiedDiffPieces('big.yaml', out.files[0]!.input, out.files[0]!.edits);
  const diffing = performance.now() - diffStarted;
  t.equal(
    pieces.join('').match(/^\+ {6}- name: istio-proxy$/gm)?.length ??
      pieces.join('').match(/^\+ {8}name: istio-proxy$/gm)?.length,
    500,
    'every workload has its proxy in the diff',
  );
  t.ok(diffing < injecting, `diff ${diffing.toFixed(0)} ms, injection ${injecting.toFixed(0)} ms`);
});

t.test(
  'inputs of every framing: CRLF, no final line break, JSON, a List, a ResourceList with results, uninject',
  async (t) => {
    // Block maps where injection adds entries (a flow map it extends is rewritten on its line).
    const deployment = (name: string) =>
      `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ${name}\n  namespace: shop\nspec:\n  selector: {matchLabels: {app: ${name}}}\n  template:\n    metadata:\n      labels:\n        app: ${name}\n    spec:\n      containers:\n      - name: ${name}\n        image: nginx\n`;
    const json = JSON.stringify(
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'j', namespace: 'shop' },
        spec: {
          selector: { matchLabels: { app: 'j' } },
          template: { metadata: { labels: { app: 'j' } }, spec: { containers: [{ name: 'j', image: 'nginx' }] } },
        },
      },
      null,
      2,
    );
    const list = `apiVersion: v1\nkind: List\nitems:\n${deployment('l')
      .split('\n')
      .filter(Boolean)
      .map((l, i) => (i === 0 ? `- ${l}` : `  ${l}`))
      .join('\n')}\n`;
    const inputs = [
      { name: 'crlf.yaml', text: `${deployment('c')}---\n${deployment('d')}`.replace(/\n/g, '\r\n') },
      { name: 'no-final-break.yaml', text: deployment('n').replace(/\n$/, '') },
      { name: 'one-line-json.json', text: JSON.stringify(JSON.parse(json)) },
      { name: 'pretty.json', text: `${json}\n` },
      { name: 'list.yaml', text: list },
    ];
    const cases = runCases(inputs);
    t.equal(cases.filter((c) => c.after !== c.before).length, inputs.length, 'every input changes');
    for (const name of ['crlf.yaml', 'list.yaml']) {
      const c = cases.find((x) => x.path === name)!;
      const body = unifiedDiffPieces(c.path, c.before, c.edits).slice(1).join('');
      t.equal(
        body.match(/^-/gm)?.length ?? 0,
        0,
        `${name}: injection only adds lines, and the diff shows only additions (built from the editor's own edits)`,
      );
      t.equal(
        body.match(/^\+/gm)?.length,
        c.after.split('\n').length - c.before.split('\n').length,
        `${name}: every added line, once`,
      );
    }
    const rl = `apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n${deployment('r')
      .split('\n')
      .filter(Boolean)
      .map((l, i) => (i === 0 ? `- ${l}` : `  ${l}`))
      .join(
        '\n',
      )}\nfunctionConfig: {apiVersion: meshinject.dev/v1alpha1, kind: SidecarInjection, metadata: {name: m}, spec: {mesh: istio}}`;
    const withResults = runCases([{ name: 'rl.yaml', text: rl }]);
    t.match(
      withResults[0]?.after,
      /\nresults:\n/,
      'the results are appended to a ResourceList without a final line break',
    );
    const injected = cases.map((c) => ({ name: `un-${c.path}`, text: c.after }));
    const un = runCases(
      injected,
      'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: m}\nspec: {mode: uninject, resultAnnotations: false}\n',
    );
    t.ok(
      un.some((c) => c.after !== c.before),
      'uninject changes the injected files',
    );
    checkApplies(t, [...cases, ...withResults, ...un], 'framings');
  },
);
