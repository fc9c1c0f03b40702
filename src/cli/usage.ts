import { OPTIONS, type CommandName } from './args.ts';
import type { DriverHelp, MeshDriver } from '../contract/driver.ts';
import { DRIVERS } from '../drivers/registry.ts';

/** meshinject's version (package.json). */
export const VERSION = '0.1.0';

function optionLines(): string {
  const rows = OPTIONS.map((o) => {
    const flag = `${o.short ? `-${o.short}, ` : '    '}--${o.name}${o.arg ? ` ${o.arg}` : ''}`;
    const only = o.only ? ` [${o.only.map((c: CommandName) => (c === 'inject' ? 'inject' : c)).join(', ')}]` : '';
    return [flag, `${o.help}${only}`] as const;
  });
  const width = Math.max(...rows.map(([f]) => f.length)) + 2;
  return rows.map(([f, h]) => `  ${f.padEnd(width)}${h}`).join('\n');
}

/** Greedy word wrap of `text` to lines of at most `width` characters. */
function wrap(text: string, width: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line].join('\n');
}

/**
 * The parts of the help that come from the drivers (`MeshDriver.help`, registry order): the `spec.mesh` line,
 * their config sections, the default mesh, what their flags are, and their own opt-in/opt-out.
 */
function driverHelp(drivers: readonly MeshDriver<unknown>[]): {
  meshLine: string;
  sections: string;
  defaultMesh: string;
  flags: string;
  decision: string;
  nativeSidecars: string;
} {
  const defaultMesh = drivers[0]?.name ?? '';
  const helps = drivers.map((d) => d.help ?? {});
  const optIns = helps.flatMap((h) => (h.optIn ? [h.optIn] : []));
  const decision = `Per workload: hostNetwork pods and ignored namespaces are never injected; then the namespaceSelector; then the driver's own opt-in/opt-out (${optIns.join(', ')}); then neverInjectSelector, alwaysInjectSelector and the policy. 'meshinject explain' shows the rules in order for each workload.`;
  return {
    meshLine: `    ${`mesh: ${defaultMesh}`.padEnd(34)}# the driver: ${drivers.map((d) => d.name).join(' | ')}`,
    sections: helps.flatMap((h) => (h.config ? h.config.split('\n').map((line) => `    ${line}`) : [])).join('\n'),
    defaultMesh,
    flags: ['--default-namespace', ...helps.flatMap((h) => (h.flags ? [h.flags] : []))].join(', '),
    decision: wrap(decision, 102),
    nativeSidecars: nativeSidecarsLine(helps),
  };
}

/** The `nativeSidecars` line of the Configuration part, with what `auto` means for each driver that says. */
function nativeSidecarsLine(helps: readonly DriverHelp[]): string {
  const auto = [
    ...helps.flatMap((h) => (h.nativeSidecarsAuto ? [h.nativeSidecarsAuto] : [])),
    'unknown version: classic',
  ].join('; ');
  const text = `proxy as an init container with restartPolicy: Always; auto: as the mesh decides for --kube-version / KUBE_VERSION (${auto})`;
  const lines = wrap(text, 68).split('\n');
  return lines
    .map((line, i) => `${i === 0 ? '    nativeSidecars: false'.padEnd(38) : ' '.repeat(38)}# ${line}`)
    .join('\n');
}

const HELP = driverHelp(DRIVERS);

/** `meshinject --help`. */
export const USAGE = `meshinject ${VERSION}: inject mesh sidecars into Kubernetes workloads, offline (a KRM function)

Usage:
  meshinject [inject] [OPTIONS] [PATH ...]   inject: read PATHs (files, directories, '-' for stdin; stdin
                                             when none), write the injected resources to stdout
  meshinject uninject [OPTIONS] [PATH ...]   remove what the mesh's driver injected (spec.mode: uninject),
                                             write the resources to stdout
  meshinject check    [OPTIONS] [PATH ...]   change nothing; exit 1 when a workload is not injected as the
                                             config says (missing, stale or unwanted sidecar, policy rule)
  meshinject explain  [OPTIONS] [PATH ...]   per workload, every decision rule in order and which decided
  meshinject diff     [OPTIONS] [PATH ...]   the unified diff injection would make (exit 0 none, 1 some, 2 an
                                             error, as kubectl diff); -i writes it back (exit 0)
  meshinject migrate --to TARGET --namespace NS [--waypoint NAME] [--diff | -i] [PATH ...]
                                             the package's namespaces moved to another data plane of the
                                             mesh, in the mesh's documented order (stdout, a diff, or -i)
  meshinject completion bash|zsh|fish        a shell completion script
  meshinject --help | --version

Inputs: several PATHs are one input (one namespace table, one set of results, one output). A directory
is read recursively (*.yaml, *.yml, *.json, sorted by path; names starting with '.' are skipped;
kustomization.yaml/.yml, Kustomization and Kptfile are not inputs) and its output holds manifests only:
local-config documents and meshinject's own config are read but not written (an info result each). '--'
ends options.

Input and output (same form out as in):
  - a KRM ResourceList (kpt fn eval/render, kustomize): items are injected, 'results' appended
  - a 'kind: List' or a multi-document YAML stream (CLI, Argo CD plugin): injected resources only
  Resources that are not changed come out byte for byte; changed ones keep comments, key order, quoting.
  With --output patches: a kustomize Component (kustomization.yaml of a component directory) whose JSON
  6902 patches apply the injection to the input resources, for teams that keep upstream manifests as they are.
  Warning and error results of a stream input are printed on stderr, one line each (-q: errors only); a
  ResourceList carries its results in the list.

Options:
${optionLines()}

Configuration (functionConfig, apiVersion meshinject.dev/v1alpha1, kind SidecarInjection):
  spec:
${HELP.meshLine}
    mode: inject                      # inject | uninject (remove what the driver injected) | check (report only)
    policy: enabled                   # enabled | disabled: default when nothing on the pod decides
    namespaceSelector: {matchLabels: {mesh: "on"}}   # LabelSelector over namespace labels (default: all)
    namespaces: [{name: shop, labels: {...}, annotations: {...}}]  # namespaces not in the input
    defaultNamespace: default         # for resources without metadata.namespace
    ignoredNamespaces: [kube-system, kube-public, kube-node-lease, local-path-storage]
    neverInjectSelector: [...]        # LabelSelectors on pod labels: never inject (checked first)
    alwaysInjectSelector: [...]       # LabelSelectors on pod labels: inject even with policy disabled
${HELP.nativeSidecars}
    kindPolicies: {Job: native, CronJob: skip}  # per kind: inject | native (only as native sidecar) | skip
    resultAnnotations: true           # write meshinject.dev/injection on every considered workload
    removeWhenSkipped: false          # uninject a workload that is now skipped but still injected
                                      # (a Job or CronJob given a classic sidecar never completes: a warning)
    injectedWorkloadAnnotations: {Job: {...}}  # annotations on injected workloads, by kind (opt-in)
    workloadKinds: [{kind: MyApp, apiVersion: example.com/v1, templatePath: spec.podTemplate}]
    check: {requireInjection: [...], forbidOptOut: false}   # rules of mode check / meshinject check
${HELP.sections}
  A plain ConfigMap works for the simple fields (data: {mesh: ${HELP.defaultMesh}, policy: disabled, ...}).
  Several --config files merge in order as Helm values files do: maps merge key by key, lists and
  scalars are replaced, null removes a field; a map against a non-map, or files of different kinds, is
  an error naming both files. Flags (${HELP.flags}) win.
  Every field: functions/meshinject/README.md, and the JSON Schemas in schemas/.

${HELP.decision}

Environment:
  LOG_TO_STDERR=true    print one line per result on stderr (kustomize sets it for container functions)
  KUBE_VERSION          the cluster's Kubernetes version for nativeSidecars: auto (Argo CD sets it for
                        plugins; --kube-version wins; ARGOCD_ENV_KUBE_VERSION from a plugin's env too);
                        1.33, v1.33.2, 1.33.2-eks-1234 or v1.30.4+k3s1, anything else is exit 2
  ARGOCD_APP_NAMESPACE  default namespace of resources without one (below --default-namespace, above
                        spec.defaultNamespace: Argo CD applies such resources there)
  HELM_NAMESPACE        the same, below ARGOCD_APP_NAMESPACE (a Helm post-renderer inherits helm's environment)
  ARGOCD_APP_NAME       (set by Argo CD) drop config.kubernetes.io/local-config objects from a plain
                        stream, and fail rather than print an empty stream
  MESHINJECT_PLANS=0    render every workload's templates in full (no sidecar plans)
  MESHINJECT_VERIFY_PLANS=1  also render in full, and fail on any difference from the plan
  NODE_OPTIONS=--max-old-space-size=MB  more heap for very large inputs (meshinject names the value it needs)

Files and the root:
  Every path the run opens must resolve, symbolic links followed, inside the root, else exit 2 naming it:
  with --root DIR, DIR for every path; under Argo CD (ARGOCD_APP_NAME set), the current directory and the
  inputs' folders; otherwise the files found in a directory given must stay inside that directory (paths
  named on the command line are read as named). --load-restrictor LoadRestrictionsNone lifts the root;
  --platform-config FILE is a config layer read wherever it is (the platform's own file, never a tenant's).
  A file given as config that is not a meshinject config is reported by kind and name, never its content.
  Inputs are all or nothing: a dangling link, a link loop, no permission, a name that is not UTF-8 or a
  directory on stdin is exit 2 naming it.
  Files are written all or nothing (diff -i, --output-file, --report F=PATH): each to a temporary beside it,
  fsynced, then renamed over the old file (mode and owner kept; a symbolic link is written through to its
  target inside the root); a failure changes no file and names the one that failed; a killed run leaves
  every file old or new (SIGINT/SIGTERM/SIGHUP while writing: temporaries removed, exit 128+signal).
  Paths to write are checked before anything is read or printed.

Exit codes:
  0  success
  1  error results (invalid annotation, bad functionConfig, ...), or a failed check: a ResourceList is
     written unchanged with its results; other forms write nothing to stdout (nor --output-file)
  2  bad input or usage (unparseable YAML, unknown option, a path that cannot be read or is outside the
     root, input over --max-input-bytes or too large for the heap, a file that cannot be written):
     nothing is written to stdout and no file is changed. A closed stderr never changes the exit code.
  meshinject diff, as kubectl diff: 0 no change, 1 changes (the diff on stdout), 2 an error (bad input,
     usage or error results: nothing on stdout); diff -i: 0 once the files are written

Examples:
  kpt fn eval . --exec meshinject --fn-config injection.yaml
  kubectl kustomize overlays/prod | meshinject --config injection.yaml > injected.yaml
  meshinject -c base.yaml -c team.yaml manifests/ > injected.yaml
  meshinject -c injection.yaml -o patches upstream/ > components/mesh/kustomization.yaml
  meshinject check --report junit=report.xml -c injection.yaml manifests/
`;
