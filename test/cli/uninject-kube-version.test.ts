/**
 * Issue #39, item 5: `meshinject uninject` is a command (as check, explain and diff are), never a file name;
 * every command the help lists is one the parser knows; a malformed Kubernetes version, from any of its
 * three sources and under any command that reads it, is a usage error (exit 2, nothing on stdout) naming the
 * source and the accepted forms.
 */
import t from 'tap';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { workspace } from '../helpers/e2e.ts';
import { COMMANDS } from '../../src/cli/args.ts';
import type { CliEnv, CliIo } from '../../src/cli.ts';

/** What one in-process run wrote and returned. */
interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `main` in this process: stdin from `input`, streams collected, `env` the whole environment. */
async function inProcess(argv: string[], opts: { input?: string; env?: CliEnv; cwd?: string } = {}): Promise<Ran> {
  const { main } = await import('../../src/cli.ts');
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    stdin: Buffer.from(opts.input ?? '', 'utf8'),
    stdout: { isTTY: false, write: (text: string) => out.push(text) },
    stderr: { isTTY: false, write: (text: string) => err.push(text) },
    cwd: opts.cwd ?? process.cwd(),
    now: () => 0,
  };
  const code = await main(argv, opts.env ?? {}, io);
  return { code, stdout: out.join(''), stderr: err.join('') };
}

const NS = 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  labels: {mesh: "on"}\n';
const WEB = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}   # the app's own label
    spec:
      containers:
      - name: web
        image: web:1
`;
const INPUT = `${NS}---\n${WEB}`;
const SIDECAR_INJECTION = (mode: string) =>
  `apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: mesh}\nspec:\n  mode: ${mode}\n  resultAnnotations: false\n  namespaceSelector: {matchLabels: {mesh: "on"}}\n`;
const CONFIG_MAP =
  'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: mesh}\ndata:\n  resultAnnotations: "false"\n  namespaceSelector: mesh=on\n';

t.test('meshinject uninject removes what inject added, whatever the config says of spec.mode', async (t) => {
  const dir = workspace(t, {
    'inject.yaml': SIDECAR_INJECTION('inject'),
    'check.yaml': SIDECAR_INJECTION('check'),
    'cm.yaml': CONFIG_MAP,
    'app.yaml': INPUT,
  });
  const injected = await inProcess(['-c', 'inject.yaml', 'app.yaml'], { cwd: dir });
  t.equal(injected.code, 0, injected.stderr);
  t.match(injected.stdout, /name: istio-proxy/, 'the sidecar is injected first');
  for (const config of ['inject.yaml', 'check.yaml', 'cm.yaml']) {
    const back = await inProcess(['uninject', '-c', config, '-'], { cwd: dir, input: injected.stdout });
    t.equal(back.code, 0, `${config}: ${back.stderr}`);
    t.equal(back.stdout, INPUT, `${config}: the input comes back byte for byte, comment included`);
    t.notMatch(back.stderr, /no such file|did you mean/, `${config}: uninject is not read as a file name`);
  }
  const written = await inProcess(['uninject', '-c', 'inject.yaml', '-', '--output-file', 'out.yaml'], {
    cwd: dir,
    input: injected.stdout,
  });
  t.equal(written.code, 0, written.stderr);
  t.equal(readFileSync(join(dir, 'out.yaml'), 'utf8'), INPUT, '--output-file applies to uninject');
  const patches = await inProcess(['uninject', '-o', 'patches', '-c', 'inject.yaml', 'app.yaml'], { cwd: dir });
  t.equal(patches.code, 2);
  t.match(patches.stderr, /--output patches is for meshinject \(inject\), not meshinject uninject/);
});

t.test('every command the help lists is a command, and every command is in the help and completions', async (t) => {
  const help = await inProcess(['--help']);
  const usage = help.stdout.slice(
    help.stdout.indexOf('Usage:'),
    help.stdout.indexOf('\n\n', help.stdout.indexOf('Usage:')),
  );
  const listed = [...usage.matchAll(/^ {2}meshinject (\[?[a-z]+\]?) /gm)].map((m) => m[1]!.replace(/[[\]]/g, ''));
  t.same([...listed].sort(), [...COMMANDS].sort(), "the Usage lines name exactly the parser's commands");
  for (const shell of ['bash', 'zsh', 'fish']) {
    const script = (await inProcess(['completion', shell])).stdout;
    for (const c of COMMANDS) t.match(script, new RegExp(`\\b${c}\\b`), `${shell} completion offers ${c}`);
  }
  // Each command with the arguments it cannot run without (migrate: a target and a namespace).
  const required: Partial<Record<(typeof COMMANDS)[number], string[]>> = {
    migrate: ['--to', 'ambient', '--namespace', 'shop'],
  };
  for (const c of COMMANDS.filter((c) => c !== 'completion')) {
    const r = await inProcess([c, ...(required[c] ?? [])], { input: INPUT });
    t.not(r.code, 2, `meshinject ${c} on stdin runs: ${r.stderr}`);
    t.notMatch(r.stderr, /no such file/);
  }
});

/** A `MAJOR.MINOR` version in one of the accepted forms. */
const goodVersion = fc
  .tuple(
    fc.boolean(),
    fc.integer({ min: 1, max: 2 }),
    fc.integer({ min: 0, max: 40 }),
    fc.option(fc.integer({ min: 0, max: 20 })),
    fc.constantFrom('', '-eks-1234', '+k3s1', '-gke.1589018'),
  )
  .map(
    ([v, major, minor, patch, suffix]) =>
      `${v ? 'v' : ''}${major}.${minor}${patch === null ? '' : `.${patch}`}${suffix}`,
  );

/** Text that is no version: a word, a major alone, a version with text after a space, a minor that is a word. */
const badVersion = fc.oneof(
  fc.stringMatching(/^[a-z]{1,10}$/),
  fc.integer({ min: 0, max: 40 }).map(String),
  goodVersion.map((v) => `${v} or so`),
  fc.stringMatching(/^[a-z]{1,6}$/).map((w) => `1.${w}`),
  fc.constantFrom('latest', 'v1', '1.', '.33', '1..33', '1.33.x', 'one.two'),
);

/** Where a version comes from, as the command line and environment of one run. */
const SOURCES = ['--kube-version', 'KUBE_VERSION', 'ARGOCD_ENV_KUBE_VERSION'] as const;
const COMMANDS_READING_IT = ['inject', 'uninject', 'check', 'explain', 'diff'] as const;

function routeOf(source: (typeof SOURCES)[number], command: string, version: string): { argv: string[]; env: CliEnv } {
  const argv = [command, '-'];
  if (source === '--kube-version') return { argv: [...argv, `--kube-version=${version}`], env: {} };
  return { argv, env: { [source]: version } };
}

t.test('a malformed Kubernetes version is a usage error from every source and command (property)', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...SOURCES),
      fc.constantFrom(...COMMANDS_READING_IT),
      badVersion,
      async (source, command, version) => {
        const { argv, env } = routeOf(source, command, version);
        const r = await inProcess(argv, { env, input: INPUT });
        if (r.code !== 2) throw new Error(`exit ${r.code} for ${source}=${version} (${command})`);
        if (r.stdout !== '') throw new Error('something on stdout');
        if (!r.stderr.includes(`${source} must be a Kubernetes version`) || !r.stderr.includes('1.33, v1.33.2'))
          throw new Error(`stderr: ${r.stderr}`);
      },
    ),
    { numRuns: 60 },
  );
});

t.test('a well-formed Kubernetes version is accepted from every source and command (property)', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...SOURCES),
      fc.constantFrom(...COMMANDS_READING_IT),
      goodVersion,
      async (source, command, version) => {
        const { argv, env } = routeOf(source, command, version);
        const r = await inProcess(argv, { env, input: INPUT });
        if (r.code === 2) throw new Error(`exit 2 for ${source}=${version} (${command}): ${r.stderr}`);
      },
    ),
    { numRuns: 40 },
  );
});

t.test('the example from the issue: --kube-version banana', async (t) => {
  const r = await inProcess(['--kube-version', 'banana', '-'], { input: INPUT });
  t.equal(r.code, 2);
  t.equal(r.stdout, '');
  t.match(r.stderr, /^meshinject: --kube-version must be a Kubernetes version: .*; got "banana"\n/);
});
