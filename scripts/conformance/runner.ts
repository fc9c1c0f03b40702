/**
 * The conformance runner: for every `<dir>/cases/<name>/` build a `ResourceList` (items = the documents of
 * `input.yaml`, functionConfig = `fn-config.yaml` + `spec.resultAnnotations: false`), pipe it to the public CLI
 * (`node bin/meshinject.js`) and compare the output items with `expected.yaml` (normalised, see
 * `normalize.ts`) or, for error cases, check the exit code and the error text (`expected-error.txt`).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import type { Json, JsonObject } from '../../src/model.ts';
import { compareDocuments, parseYamlStream } from './normalize.ts';
import { isJsonObject } from '../../src/json.ts';

/** Outcome of one case. */
export interface CaseResult {
  name: string;
  category: string;
  /** `spec.mode` of the case's fn-config (`inject` when absent). */
  mode: string;
  pass: boolean;
  /** Why it failed (first differing path, missing error text, CLI failure). */
  reason?: string;
}

/** Options of {@link runConformance}. */
export interface RunOptions {
  /** Path of the CLI entry (default: `bin/meshinject.js` of this repository). */
  cli?: string;
  /** Cases run in parallel (default 6). */
  concurrency?: number;
  /** Only cases whose name matches. */
  filter?: RegExp;
  /** Only about this many cases per corpus, each category represented, evenly spaced by name (see {@link sampleNames}). */
  sample?: number;
}

/**
 * A deterministic sample of `n` names out of the sorted `names`: positions `floor(i * len / n)`, so the same corpus
 * always gives the same cases and the sample spreads over the whole alphabet. All names when `n >= len`.
 */
export function sampleNames(names: readonly string[], n: number): string[] {
  if (n >= names.length) return [...names];
  return Array.from({ length: Math.max(0, n) }, (_, i) => names[Math.floor((i * names.length) / n)]!);
}

/**
 * About `n` of the sorted case `names`, every category represented: each category of `case.yaml` gets
 * `max(1, round(n * its share))` cases, chosen by {@link sampleNames}; the result is sorted.
 */
function sampleByCategory(casesDir: string, names: readonly string[], n: number): string[] {
  const groups = new Map<string, string[]>();
  for (const name of names) {
    const c = (parse(readFileSync(join(casesDir, name, 'case.yaml'), 'utf8')) as { category?: unknown } | null)
      ?.category;
    const key = typeof c === 'string' ? c : 'unknown';
    groups.set(key, [...(groups.get(key) ?? []), name]);
  }
  const out = [...groups.values()].flatMap((g) =>
    sampleNames(g, Math.max(1, Math.round((n * g.length) / names.length))),
  );
  return out.sort();
}

/**
 * The case's fn-config text. A release corpus written with shared templates (case.yaml `sharedTemplates`: a path
 * relative to the case directory, inside its corpus) keeps the release's chart templates once; they are merged under
 * the case's own `spec.istio.injectorConfig.templates` (the case's entries win).
 * @throws Error when the shared file lies outside the corpus or is not `{templates: {name: text}}`
 */
export function caseFnConfig(caseDir: string, caseYaml: JsonObject): string {
  const text = readFileSync(join(caseDir, 'fn-config.yaml'), 'utf8');
  const ref = caseYaml.sharedTemplates;
  if (ref === undefined) return text;
  const corpus = dirname(dirname(resolve(caseDir)));
  const file = resolve(caseDir, String(ref));
  if (typeof ref !== 'string' || relative(corpus, file).startsWith('..'))
    throw new Error(`sharedTemplates must name a file inside the corpus: ${String(ref)}`);
  const shared = parse(readFileSync(file, 'utf8')) as { templates?: unknown } | null;
  if (!isJsonObject(shared?.templates as Json)) throw new Error(`${String(ref)}: expected {templates: {name: text}}`);
  const fc = (parse(text) ?? {}) as { spec?: { istio?: { injectorConfig?: { templates?: JsonObject } } } };
  const ic = fc.spec?.istio?.injectorConfig;
  if (!ic) throw new Error('sharedTemplates needs spec.istio.injectorConfig in fn-config.yaml');
  ic.templates = { ...(shared!.templates as JsonObject), ...(ic.templates ?? {}) };
  return stringify(fc, { lineWidth: 0 });
}

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Splits a YAML stream into document texts like Go's `yaml.NewYAMLReader`: a separator is a line starting with
 * `---` followed only by blanks. Documents that parse to nothing (empty or comments only) are dropped.
 */
export function splitDocuments(text: string): string[] {
  const docs: string[] = [];
  let cur: string[] = [];
  const flush = (): void => {
    const body = cur.join('\n');
    cur = [];
    let v: unknown;
    try {
      v = parse(body, { version: '1.1' });
    } catch {
      v = body; // keep unparsable text: the CLI must report it
    }
    if (v !== null && v !== undefined) docs.push(body);
  };
  for (const line of text.split(/\r?\n/)) {
    if (/^---\s*$/.test(line)) flush();
    else cur.push(line);
  }
  flush();
  return docs;
}

/**
 * The ResourceList text for one case: each document's text kept as is (indented under `items`), the function
 * config re-serialised with `spec.resultAnnotations: false` merged in and `spec.mode: inject` (the default)
 * left out.
 */
export function buildResourceList(inputYaml: string, fnConfigYaml: string): string {
  const fnConfig = (parse(fnConfigYaml) ?? {}) as JsonObject;
  const spec = (
    typeof fnConfig.spec === 'object' && fnConfig.spec !== null && !Array.isArray(fnConfig.spec) ? fnConfig.spec : {}
  ) as JsonObject;
  const { mode, ...rest } = spec;
  // `mode: inject` is the default; left out so that builds without `spec.mode` run the inject cases too.
  fnConfig.spec = { ...rest, ...(mode !== undefined && mode !== 'inject' ? { mode } : {}), resultAnnotations: false };
  const items = splitDocuments(inputYaml).map((d) => {
    const lines = d.replace(/\s+$/, '').split('\n');
    return lines.map((l, i) => (i === 0 ? `- ${l}` : l === '' ? '' : `  ${l}`)).join('\n');
  });
  const fc = stringify(fnConfig)
    .replace(/\s+$/, '')
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
  return [
    'apiVersion: config.kubernetes.io/v1',
    'kind: ResourceList',
    items.length > 0 ? `items:\n${items.join('\n')}` : 'items: []',
    `functionConfig:\n${fc}`,
    '',
  ].join('\n');
}

interface CliOutput {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runCli(cli: string, input: string): Promise<CliOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli], { stdio: ['pipe', 'pipe', 'pipe'], cwd: REPO_ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}

function asObject(v: unknown): JsonObject | undefined {
  return isJsonObject(v) ? v : undefined;
}

/** Items and results of the CLI's ResourceList output. */
function readOutput(stdout: string): { items: Json[]; results: JsonObject[] } {
  const docs = parseYamlStream(stdout);
  const rl = asObject(docs[0]);
  if (rl?.kind !== 'ResourceList') throw new Error('output is not a ResourceList');
  const items = Array.isArray(rl.items) ? rl.items : [];
  const results = (Array.isArray(rl.results) ? rl.results : []).map(asObject).filter((r): r is JsonObject => !!r);
  return { items, results };
}

function firstLine(s: string): string {
  return (s.trim().split('\n')[0] ?? '').slice(0, 200);
}

/** Runs one case directory; never throws (a crash is a failed case). */
export async function runCase(caseDir: string, name: string, cli: string): Promise<CaseResult> {
  const caseYaml = (parse(readFileSync(join(caseDir, 'case.yaml'), 'utf8')) ?? {}) as JsonObject;
  const category = typeof caseYaml.category === 'string' ? caseYaml.category : 'unknown';
  const fnSpec = (parse(readFileSync(join(caseDir, 'fn-config.yaml'), 'utf8')) as { spec?: { mode?: unknown } } | null)
    ?.spec;
  const mode = typeof fnSpec?.mode === 'string' ? fnSpec.mode : 'inject';
  const fail = (reason: string): CaseResult => ({ name, category, mode, pass: false, reason });
  try {
    const input = buildResourceList(readFileSync(join(caseDir, 'input.yaml'), 'utf8'), caseFnConfig(caseDir, caseYaml));
    const out = await runCli(cli, input);
    const errorFile = join(caseDir, 'expected-error.txt');
    if (existsSync(errorFile)) {
      const want = readFileSync(errorFile, 'utf8').trim().toLowerCase();
      if (out.code === 0) return fail(`exit code 0, expected an error containing "${want}"`);
      let messages = out.stderr;
      try {
        const { results } = readOutput(out.stdout);
        messages +=
          '\n' +
          results
            .filter((r) => r.severity === 'error')
            .map((r) => String(r.message))
            .join('\n');
      } catch {
        messages += `\n${out.stdout}`;
      }
      if (!messages.toLowerCase().includes(want)) return fail(`error output lacks "${want}": ${firstLine(messages)}`);
      return { name, category, mode, pass: true };
    }
    if (out.code !== 0) return fail(`exit code ${out.code}: ${firstLine(out.stderr) || firstLine(out.stdout)}`);
    const { items, results } = readOutput(out.stdout);
    const expected = parseYamlStream(readFileSync(join(caseDir, 'expected.yaml'), 'utf8'));
    const diff = compareDocuments(expected, items);
    if (!diff.equal) {
      const errs = results.filter((r) => r.severity === 'error').map((r) => String(r.message));
      return fail(`${diff.detail}${errs.length ? ` [error result: ${firstLine(errs[0]!)}]` : ''}`);
    }
    const warn = caseYaml.expectWarningContaining;
    if (typeof warn === 'string') {
      const all = results.map((r) => String(r.message).toLowerCase());
      if (!all.some((m) => m.includes(warn.toLowerCase()))) return fail(`no result message contains "${warn}"`);
    }
    return { name, category, mode, pass: true };
  } catch (e) {
    return fail(`runner error: ${(e as Error).message}`);
  }
}

function newestMtime(dir: string): number {
  let m = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    m = Math.max(m, e.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return m;
}

/** Rebuilds the CLI bundle (`scripts/build.mjs`) when a file under `src/` is newer; `status` 0 when fresh. */
export function ensureFreshBundle(root: string): { status: number | null; stderr: string } {
  const bundle = join(root, 'dist/meshinject.cjs');
  if (existsSync(bundle) && statSync(bundle).mtimeMs >= newestMtime(join(root, 'src')))
    return { status: 0, stderr: '' };
  const b = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: root, encoding: 'utf8' });
  return { status: b.status, stderr: b.stderr };
}

/**
 * The corpora under `dir`: `dir` itself when it has `cases/`, else each subdirectory that has `cases/`
 * (e.g. `istio-versions/<release>`), sorted, labelled with the subdirectory name.
 */
export function corpusDirs(dir: string): Array<{ label: string; dir: string }> {
  if (existsSync(join(dir, 'cases'))) return [{ label: '', dir }];
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(dir, d.name, 'cases')))
    .map((d) => ({ label: d.name, dir: join(dir, d.name) }))
    .sort((a, b) => a.label.localeCompare(b.label));
}

/**
 * Runs every `<dir>/cases/<name>/` (sorted by name).
 * @param dir corpus directory (`.../conformance/istio`)
 */
export async function runConformance(dir: string, opts: RunOptions = {}): Promise<CaseResult[]> {
  const cli = opts.cli ?? join(REPO_ROOT, 'bin/meshinject.js');
  const casesDir = join(dir, 'cases');
  const all = readdirSync(casesDir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && (!opts.filter || opts.filter.test(d.name)))
    .map((d) => d.name)
    .sort();
  const names = opts.sample === undefined ? all : sampleByCategory(casesDir, all, opts.sample);
  const results: CaseResult[] = new Array(names.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < names.length) {
      const i = next++;
      results[i] = await runCase(join(casesDir, names[i]!), names[i]!, cli);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency ?? 6) }, worker));
  return results;
}

/**
 * Pass counts per category: `{ category: { passed, total } }`, categories sorted. `key` picks the category
 * of a result (default: `case.yaml`'s category; e.g. `(r) => \`linkerd-${r.mode}\`` groups by mode).
 */
export function summarize(
  results: readonly CaseResult[],
  key: (r: CaseResult) => string = (r) => r.category,
): Record<string, { passed: number; total: number }> {
  const out: Record<string, { passed: number; total: number }> = {};
  for (const r of [...results].sort((a, b) => key(a).localeCompare(key(b)))) {
    const s = out[key(r)] ?? { passed: 0, total: 0 };
    out[key(r)] = s;
    s.total += 1;
    if (r.pass) s.passed += 1;
  }
  return out;
}

/** Categories whose pass count is below `min[category]`, as messages. */
export function checkMinimums(
  summary: Record<string, { passed: number; total: number }>,
  min: Record<string, number>,
): string[] {
  const out: string[] = [];
  for (const [cat, want] of Object.entries(min)) {
    const got = summary[cat]?.passed ?? 0;
    if (got < want) out.push(`${cat}: ${got} passed, minimum ${want}`);
  }
  return out;
}
