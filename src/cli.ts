/**
 * The meshinject command: the only module that touches `process` (argv, env, stdin, stdout, stderr,
 * exitCode) and the file system. It never ends the process early: piped stdout over 64 KiB would be cut
 * and kpt would then delete files (krm-ecosystem.md, hazard G1); the exit code is set and Node drains.
 */
import { readFileSync } from 'node:fs';
import { run, type RunOutput } from './run.ts';

const VERSION = '0.1.0';

export const USAGE = `meshinject ${VERSION}: inject mesh sidecars into Kubernetes workloads, offline (a KRM function)

Usage:
  meshinject [--config FILE] [FILE ...]     read FILEs (or stdin when none, or '-'), write stdout
  meshinject --help | --version

Input and output (same form out as in):
  - a KRM ResourceList (kpt fn eval/render, kustomize): items are injected, 'results' appended
  - a 'kind: List' or a multi-document YAML stream (CLI, Argo CD plugin): injected resources only
  Resources that are not changed come out byte for byte; changed ones keep comments, key order, quoting.

Options:
  -c, --config FILE   functionConfig file (SidecarInjection or ConfigMap); overrides the ResourceList's
  -h, --help          this help
  -v, --version       print the version

Configuration (functionConfig, apiVersion meshinject.dev/v1alpha1, kind SidecarInjection):
  spec:
    mesh: istio                       # sidecar class (istio in this version)
    policy: enabled                   # enabled | disabled: default when nothing on the pod decides
    namespaceSelector: {matchLabels: {mesh: "on"}}   # LabelSelector over namespace labels (default: all)
    namespaces: [{name: shop, labels: {...}, annotations: {...}}]  # namespaces not in the input
    defaultNamespace: default         # for resources without metadata.namespace
    ignoredNamespaces: [kube-system, kube-public, kube-node-lease, local-path-storage]
    neverInjectSelector: [...]        # LabelSelectors on pod labels: never inject (checked first)
    alwaysInjectSelector: [...]       # LabelSelectors on pod labels: inject even with policy disabled
    nativeSidecars: false             # proxy as an init container with restartPolicy: Always
    resultAnnotations: true           # write meshinject.dev/injection on every considered workload
    workloadKinds: [{kind: MyApp, apiVersion: example.com/v1, templatePath: spec.podTemplate}]
    istio:
      revision: ""                    # control-plane revision ("" = default)
      selection: kube-inject          # kube-inject | webhook (MutatingWebhookConfiguration routing)
      values: {...}                   # istiod chart values (or the istio-sidecar-injector 'values' JSON)
      meshConfig: {...}               # mesh config (or the istio ConfigMap 'mesh' YAML)
  A plain ConfigMap works for the simple fields (data: {mesh: istio, policy: disabled, ...}).

Per workload: sidecar.istio.io/inject label (over the annotation) "true"/"false" decides; then
neverInjectSelector, alwaysInjectSelector, policy. hostNetwork pods and ignored namespaces are never injected.

Environment:
  LOG_TO_STDERR=true  print one line per result on stderr (kustomize sets it for container functions)

Exit codes:
  0  success
  1  error results (invalid annotation, bad functionConfig, ...): a ResourceList is written unchanged with
     its results; other forms write nothing to stdout
  2  bad input or usage (unparseable YAML, unknown option): nothing is written to stdout

Examples:
  kpt fn eval . --exec meshinject --fn-config injection.yaml
  kubectl kustomize overlays/prod | meshinject --config injection.yaml > injected.yaml
`;

interface Args {
  help: boolean;
  version: boolean;
  config?: string;
  files: string[];
}

function parseArgs(argv: string[]): Args | string {
  const a: Args = { help: false, version: false, files: [] };
  for (let i = 0; i < argv.length; i++) {
    const x = argv[i]!;
    if (x === '-h' || x === '--help') a.help = true;
    else if (x === '-v' || x === '--version') a.version = true;
    else if (x === '-c' || x === '--config') {
      const v = argv[++i];
      if (v === undefined) return `${x} needs a file`;
      a.config = v;
    } else if (x.startsWith('--config=')) a.config = x.slice('--config='.length);
    else if (x.startsWith('-') && x !== '-') return `unknown option ${x}`;
    else a.files.push(x);
  }
  return a;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Reads a file (or stdin for `-`) as UTF-8; invalid UTF-8 is an error, never silently replaced. */
function readInput(file: string): string {
  const bytes = readFileSync(file === '-' ? 0 : file);
  try {
    return UTF8.decode(bytes);
  } catch {
    throw new Error('input is not valid UTF-8 (YAML and Kubernetes manifests must be UTF-8)');
  }
}

function main(): void {
  const args = parseArgs(process.argv.slice(2));
  if (typeof args === 'string') {
    process.stderr.write(`meshinject: ${args}\nRun 'meshinject --help' for usage.\n`);
    process.exitCode = 2;
    return;
  }
  if (args.help) {
    process.stdout.write(USAGE);
    return;
  }
  if (args.version) {
    process.stdout.write(`meshinject ${VERSION}\n`);
    return;
  }
  const logToStderr = /^(true|1)$/i.test(process.env.LOG_TO_STDERR ?? '');
  let functionConfig: string | undefined;
  try {
    if (args.config !== undefined) functionConfig = readInput(args.config);
  } catch (e) {
    process.stderr.write(`meshinject: error: cannot read --config ${args.config}: ${(e as Error).message}\n`);
    process.exitCode = 2;
    return;
  }
  const files = args.files.length ? args.files : ['-'];
  const outputs: RunOutput[] = [];
  for (const f of files) {
    let text: string;
    try {
      text = readInput(f);
    } catch (e) {
      process.stderr.write(`meshinject: error: cannot read ${f}: ${(e as Error).message}\n`);
      process.exitCode = 2;
      return;
    }
    const inputName = f === '-' ? undefined : f;
    const out = run(text, { logToStderr, ...(functionConfig !== undefined ? { functionConfig } : {}), ...(inputName ? { inputName } : {}) });
    outputs.push(out);
    if (out.exitCode === 2) break;
  }
  const exitCode = Math.max(...outputs.map((o) => o.exitCode));
  for (const o of outputs) if (o.stderr) process.stderr.write(o.stderr);
  // Output is complete or absent: nothing on stdout when any input was bad.
  if (exitCode !== 2) {
    const parts = outputs.map((o) => o.stdout).filter((s) => s.length > 0);
    // Several inputs become one YAML stream: each part on its own lines, separated by `---`.
    const joined = parts
      .map((p, i) => (i > 0 && !p.startsWith('---') ? `---\n${p}` : p))
      .map((p, i, all) => (i < all.length - 1 && !p.endsWith('\n') ? `${p}\n` : p))
      .join('');
    if (joined) process.stdout.write(joined);
  }
  process.exitCode = exitCode;
}

try {
  main();
} catch (e) {
  process.stderr.write(`meshinject: internal error: ${(e as Error).stack ?? String(e)}\n`);
  process.exitCode = 2;
}
