/**
 * Helpers of the end-to-end tests (`test/e2e-*.test.ts`): run the real binary and the real kpt/kubectl,
 * cut outputs into per-resource source text (to compare bytes, not parsed data), and check injected
 * workloads against the Kubernetes schema (`kubernetes-models`). Not a test file itself.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { Deployment, StatefulSet, DaemonSet, ReplicaSet } from 'kubernetes-models/apps/v1';
import { CronJob, Job } from 'kubernetes-models/batch/v1';
import { Pod } from 'kubernetes-models/v1';

/** The repository root and the CLI entry. Third-party inputs come from test/helpers/data.ts. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = fileURLToPath(new URL('../../bin/meshinject.js', import.meta.url));

/** The annotation meshinject writes on every considered workload, and its value for a default-revision inject. */
export const RESULT_ANNOTATION = 'meshinject.dev/injection';
export const INJECTED_DEFAULT = 'injected (istio, revision default)';

export type Obj = Record<string, unknown>;

/** Outcome of a child process; `status` is null when it was killed. */
export interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node bin/meshinject.js ARGS` with `input` on stdin. `LOG_TO_STDERR` from the test's own environment
 * is removed unless given in `env`.
 */
export function runCli(args: string[], opts: { input?: string; env?: Record<string, string>; cwd?: string } = {}): Ran {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.LOG_TO_STDERR;
  Object.assign(env, opts.env ?? {});
  const r = spawnSync(process.execPath, [BIN, ...args], {
    input: opts.input ?? '',
    encoding: 'utf8',
    env,
    cwd: opts.cwd ?? ROOT,
    maxBuffer: 256 * 1024 * 1024,
  });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Runs any command (kpt, kubectl, git) and returns its outcome; throws only when it cannot start. */
export function runTool(cmd: string, args: string[], opts: { cwd?: string; input?: string } = {}): Ran {
  const r = spawnSync(cmd, args, {
    cwd: opts.cwd ?? ROOT,
    input: opts.input ?? '',
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A fresh temp dir; `cleanup` removes it. */
export function makeTempDir(prefix: string): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `meshinject-e2e-${prefix}-`));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A copy of this checkout at `dir` as a fresh clone has it: the files git tracks (nothing built: no dist/),
 * with `node_modules` a symbolic link to this checkout's (what `npm ci` would install). Tests that build or
 * install (`scripts/build.mjs`, `npm install -g .`, which runs `prepare`) do it in such a copy: rebuilt in the
 * checkout, dist/ would change under the test files running beside them (the `after` script,
 * test/setup/test-data-notice.mjs, fails a run in which it changed).
 */
export function copyCheckout(dir: string): void {
  const r = spawnSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.error) throw r.error;
  for (const f of r.stdout.split('\0').filter(Boolean)) {
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    cpSync(join(ROOT, f), join(dir, f));
  }
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
}

/** A temp dir holding `files` (relative path → text), removed when the test ends; returns its path. */
export function workspace(t: { teardown(fn: () => void): void }, files: Record<string, string>, prefix = 'ws'): string {
  const tmp = makeTempDir(prefix);
  t.teardown(tmp.cleanup);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(tmp.dir, name)), { recursive: true });
    writeFileSync(join(tmp.dir, name), text);
  }
  return tmp.dir;
}

/**
 * Cuts a multi-document YAML stream into its documents' source text: the separators are lines that are
 * exactly `---` (optionally followed by spaces). Comments before a resource belong to its document.
 */
export function splitStream(text: string): string[] {
  return text.split(/^---[ \t]*(?:\r?\n|$)/m);
}

/** One `items:` entry of a ResourceList as text (from its `- ` line to the next entry) and as data. */
export interface ItemText {
  text: string;
  value: Obj;
}

/**
 * Cuts the `items:` block of a ResourceList/List written in block style at column 0 (how kpt and
 * kustomize write it) into one text chunk per `- ` entry, without a YAML library deciding what belongs
 * to which node. Also returns the text after the block (`functionConfig`, `results`).
 */
export function splitItems(text: string): { items: ItemText[]; rest: string } {
  const lines = text.split(/(?<=\n)/);
  const start = lines.findIndex((l) => /^items:\s*$/.test(l));
  if (start < 0) throw new Error('no block `items:` at column 0');
  const chunks: string[] = [];
  let rest = '';
  let i = start + 1;
  for (; i < lines.length; i++) {
    const l = lines[i]!;
    if (l.startsWith('- ') || l === '-\n') chunks.push(l);
    else if (/^\S/.test(l) && !l.startsWith('#')) break;
    else if (chunks.length) chunks[chunks.length - 1] += l;
  }
  rest = lines.slice(0, start).join('') + lines.slice(i).join('');
  return {
    items: chunks.map((c) => ({ text: c, value: parse(c)[0] as Obj })),
    rest,
  };
}

/** Reads a nested field (`get(obj, 'spec', 'template')`), undefined when any step is missing. */
export function get(o: unknown, ...path: Array<string | number>): unknown {
  let cur: unknown = o;
  for (const p of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[p];
  }
  return cur;
}

/** `kind/namespace/name` of a resource, for messages and maps. */
export function idOf(o: Obj): string {
  return `${String(o.kind)}/${String(get(o, 'metadata', 'namespace') ?? '')}/${String(get(o, 'metadata', 'name'))}`;
}

/** Pod template path of the built-in workload kinds (undefined for anything else). */
export function podTemplateOf(o: Obj): Obj | undefined {
  switch (o.kind) {
    case 'Deployment':
    case 'StatefulSet':
    case 'DaemonSet':
    case 'ReplicaSet':
    case 'Job':
    case 'ReplicationController':
      return get(o, 'spec', 'template') as Obj | undefined;
    case 'CronJob':
      return get(o, 'spec', 'jobTemplate', 'spec', 'template') as Obj | undefined;
    case 'Pod':
      return o;
    default:
      return undefined;
  }
}

export const WORKLOAD_KINDS = new Set([
  'Deployment',
  'StatefulSet',
  'DaemonSet',
  'ReplicaSet',
  'Job',
  'CronJob',
  'Pod',
  'ReplicationController',
]);

function names(list: unknown): string[] {
  return Array.isArray(list) ? list.map((c) => String((c as Obj).name)) : [];
}

/** Validates a workload against the Kubernetes OpenAPI schema; returns the error message or undefined. */
export function schemaError(o: Obj): string | undefined {
  const ctor: Record<string, new (x: never) => { validate(): void }> = {
    Deployment,
    StatefulSet,
    DaemonSet,
    ReplicaSet,
    Job,
    CronJob,
    Pod,
  };
  const C = ctor[String(o.kind)];
  if (!C) return `no schema for ${String(o.kind)}`;
  try {
    new C(structuredClone(o) as never).validate();
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/**
 * What a user checks on an injected workload: the proxy container (in `containers`, or in
 * `initContainers` with `restartPolicy: Always` when `native`), Istio's `sidecar.istio.io/status`
 * annotation naming it, meshinject's result annotation, the app containers kept (same names and
 * images, in order), and a valid Kubernetes object. Returns a list of problems (empty = fine).
 */
export function injectionProblems(
  out: Obj,
  input: Obj,
  opts: { native?: boolean; annotation?: string } = {},
): string[] {
  const problems: string[] = [];
  const pod = podTemplateOf(out);
  const podIn = podTemplateOf(input);
  if (!pod || !podIn) return ['no pod template'];
  const spec = (pod.spec ?? {}) as Obj;
  const specIn = (podIn.spec ?? {}) as Obj;
  const containers = (spec.containers ?? []) as Obj[];
  const inits = (spec.initContainers ?? []) as Obj[];
  const proxyIn = opts.native
    ? inits.find((c) => c.name === 'istio-proxy')
    : containers.find((c) => c.name === 'istio-proxy');
  if (!proxyIn) problems.push(`istio-proxy not in ${opts.native ? 'initContainers' : 'containers'}`);
  else {
    if (opts.native && proxyIn.restartPolicy !== 'Always')
      problems.push('native istio-proxy without restartPolicy: Always');
    if (typeof proxyIn.image !== 'string' || !/proxyv2/.test(proxyIn.image))
      problems.push(`unexpected proxy image ${String(proxyIn.image)}`);
  }
  if (!opts.native && inits.some((c) => c.name === 'istio-proxy')) problems.push('istio-proxy also in initContainers');
  // Istio kube-inject reads and writes a CronJob's metadata at `spec.jobTemplate.metadata`, not the pod
  // template's (istio-injection.md §4 table, pkg/kube/inject/inject.go `IntoObject`); meshinject matches it.
  const meta = out.kind === 'CronJob' ? get(out, 'spec', 'jobTemplate', 'metadata') : pod.metadata;
  const status = get(meta, 'annotations', 'sidecar.istio.io/status');
  if (typeof status !== 'string') problems.push('no sidecar.istio.io/status annotation');
  else {
    try {
      const s = JSON.parse(status) as Obj;
      const listed = [...((s.containers as string[] | null) ?? []), ...((s.initContainers as string[] | null) ?? [])];
      if (!listed.includes('istio-proxy'))
        problems.push(`sidecar.istio.io/status does not list istio-proxy: ${status}`);
    } catch {
      problems.push(`sidecar.istio.io/status is not JSON: ${status}`);
    }
  }
  const want = opts.annotation ?? INJECTED_DEFAULT;
  const got = get(out, 'metadata', 'annotations', RESULT_ANNOTATION);
  if (got !== want) problems.push(`${RESULT_ANNOTATION} is ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  const appIn = ((specIn.containers ?? []) as Obj[]).map((c) => `${String(c.name)}=${String(c.image)}`);
  const appOut = containers.filter((c) => c.name !== 'istio-proxy').map((c) => `${String(c.name)}=${String(c.image)}`);
  if (appIn.join(',') !== appOut.join(','))
    problems.push(`app containers changed: ${appIn.join(',')} -> ${appOut.join(',')}`);
  const initIn = names(specIn.initContainers);
  for (const n of initIn) if (!names(inits).includes(n)) problems.push(`init container ${n} lost`);
  const err = schemaError(out);
  if (err) problems.push(`schema: ${err}`);
  return problems;
}

/** Problems of a workload that must NOT be injected: no proxy anywhere, and a `skipped (...)` annotation. */
export function skippedProblems(out: Obj, opts: { reason?: RegExp; resultAnnotations?: boolean } = {}): string[] {
  const problems: string[] = [];
  const pod = podTemplateOf(out);
  const spec = (pod?.spec ?? {}) as Obj;
  if ([...names(spec.containers), ...names(spec.initContainers)].includes('istio-proxy'))
    problems.push('istio-proxy present');
  const meta = out.kind === 'CronJob' ? get(out, 'spec', 'jobTemplate', 'metadata') : pod?.metadata;
  if (get(meta, 'annotations', 'sidecar.istio.io/status') !== undefined)
    problems.push('sidecar.istio.io/status present');
  if (opts.resultAnnotations !== false) {
    const got = get(out, 'metadata', 'annotations', RESULT_ANNOTATION);
    if (typeof got !== 'string' || !/^skipped \(.+\)$/.test(got))
      problems.push(`${RESULT_ANNOTATION} is ${JSON.stringify(got)}`);
    else if (opts.reason && !opts.reason.test(got))
      problems.push(`${RESULT_ANNOTATION} "${got}" does not match ${String(opts.reason)}`);
  }
  return problems;
}

/**
 * Full-line comments of a YAML text (`# ...` lines, trimmed), as a multiset `comment -> count`. Used to
 * check that comments are neither lost nor duplicated (hazard G4) without caring where kpt re-indents them.
 */
export function commentCounts(text: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const line of text.split(/\r?\n/)) {
    const s = line.trim();
    if (s.startsWith('#')) m.set(s, (m.get(s) ?? 0) + 1);
  }
  return m;
}

/** Differences between two comment multisets, e.g. `["# foo: 1 -> 2"]`. */
export function commentDiff(before: Map<string, number>, after: Map<string, number>): string[] {
  const out: string[] = [];
  for (const k of new Set([...before.keys(), ...after.keys()])) {
    const a = before.get(k) ?? 0;
    const b = after.get(k) ?? 0;
    if (a !== b) out.push(`${k}: ${a} -> ${b}`);
  }
  return out;
}

/** The leading comment block of a text (its `#` and blank lines before the first content line). */
export function headerComments(text: string): string {
  const lines = text.split(/(?<=\n)/);
  const out: string[] = [];
  for (const l of lines) {
    if (/^\s*(#.*)?\r?\n?$/.test(l)) out.push(l);
    else break;
  }
  return out.join('').trim();
}
