import type { ActiveMesh, PackageFinding, PackageResource, PackageWorkload } from '../contract/driver.ts';
import { parseSource, rangeOf, type ParsedSource, type SourceItem } from '../krm/source.ts';
import type { Edit } from '../krm/write.ts';
import type { Config } from '../model.ts';
import type { KrmResult, ResourceId } from '../model.ts';
import {
  collectNamespaces,
  collectServices,
  processItems,
  resourceId,
  unknownNamespaceResults,
  type SharedRun,
  type WorkloadRecord,
} from '../pipeline.ts';
import { MeshInjectError } from '../results/errors.ts';
import { generalResult, resourceResult } from '../results/result.ts';
import { isJsonObject } from '../json.ts';
import { IdentityTable, repeatedKeys } from '../krm/identity.ts';

import type { RunInput, RunOptions } from '../run.ts';
import type { RenderRun } from '../render/run-state.ts';

export const LOCAL_CONFIG = 'config.kubernetes.io/local-config';

/** apiVersion prefix of meshinject's own config kinds (`SidecarInjection`). */
export const OWN_API_GROUP = 'meshinject.dev/';

/** Whether a document is one a manifests-only output leaves out, and why (undefined: it is written). */
export function leftOutWhy(v: unknown, ownKinds: boolean): string | undefined {
  if (!isJsonObject(v)) return undefined;
  const ann = isJsonObject(v.metadata) && isJsonObject(v.metadata.annotations) ? v.metadata.annotations : undefined;
  if (ann && Object.hasOwn(ann, LOCAL_CONFIG) && ann[LOCAL_CONFIG] === 'true')
    return `annotated ${LOCAL_CONFIG}: "true"`;
  if (ownKinds && typeof v.apiVersion === 'string' && v.apiVersion.startsWith(OWN_API_GROUP))
    return `meshinject's own config (${v.apiVersion})`;
  return undefined;
}

/**
 * The top-level stream documents of `source` to leave out of the output, as replacement ranges: each covers
 * the document and the separator and comments before it, so no empty document is left. Under Argo CD
 * (`ownKinds` false) local-config documents; for a manifests-only input also meshinject's own config kinds.
 */
export function localConfigDrops(source: ParsedSource, ownKinds: boolean, name: string | undefined): Drop[] {
  if (source.form !== 'stream') return [];
  const out: Drop[] = [];
  let prevEnd = 0;
  for (const item of source.items) {
    if (item.position !== item.topPosition) continue;
    const why = leftOutWhy(item.value, ownKinds);
    if (why !== undefined)
      out.push(Object.assign(rangeOf(item), { start: prevEnd, why, id: resourceId(item, source, name) }));
    prevEnd = item.end;
  }
  return out;
}

/** A document left out of the output: its range (with the separator before it), why, and its identity for the result. */
export type Drop = SourceItem & { why: string; id: ResourceId };

/** The info result of a document a manifests-only input leaves out. */
export function leftOutResult(d: Drop): KrmResult {
  return resourceResult(
    'info',
    `read but not written: ${d.why} (the output of a directory input holds only what the cluster is to apply)`,
    d.id,
    { tags: { 'meshinject.dev/outcome': 'left-out', 'meshinject.dev/reason': 'local-config' } },
  );
}

/**
 * Reads every input (a leading BOM ignored). A ResourceList must be the only input. A stream without resources
 * (empty, blank, comments or `---` only) is an empty stream when it is the only input (Helm runs a
 * post-renderer on whatever it rendered, nothing included: `execRender.Run`, pkg/postrender/exec.go); among
 * several inputs it is an error.
 * @throws MeshInjectError `BAD_INPUT` naming the input
 */
export function parseInputs(inputs: readonly RunInput[]): ParsedSource[] {
  return inputs.map((input) => {
    const where = input.name ?? 'input';
    const text = input.text.charCodeAt(0) === 0xfeff ? input.text.slice(1) : input.text;
    const source = parseSource(text, where);
    if (source.form === 'resource-list' && inputs.length > 1) {
      throw new MeshInjectError(
        'BAD_INPUT',
        `${where}: a ResourceList must be the only input (got ${inputs.length} inputs)`,
      );
    }
    if (source.form === 'stream' && source.items.length === 0 && inputs.length > 1) {
      throw new MeshInjectError(
        'BAD_INPUT',
        `${where}: no resources: expected a ResourceList, a List or Kubernetes YAML documents`,
      );
    }
    return source;
  });
}

/** `f()`, or the message of the `BAD_INPUT` error it throws (the run then writes nothing, exit 2); other errors propagate. */
export function orBadInput<T>(f: () => T): { ok: true; value: T } | { ok: false; message: string } {
  try {
    return { ok: true, value: f() };
  } catch (e) {
    if (!(e instanceof MeshInjectError) || e.code !== 'BAD_INPUT') throw e;
    return { ok: false, message: e.message };
  }
}

/**
 * The run's identity table. When the fast block reader read every resource (their data is in memory already),
 * the identities that repeat are counted first, so that only their resources get a fingerprint; otherwise
 * (resources composed one at a time by the `yaml` path) every resource gets one.
 */
export function identityTableFor(items: readonly SourceItem[], config: Config): IdentityTable {
  if (!items.every((it) => it.reader === 'block')) return new IdentityTable();
  return new IdentityTable(
    repeatedKeys(
      items.map((it) => it.value),
      config.defaultNamespace,
    ),
  );
}

/** What processing the inputs gave: per input its changed resources and dropped local-config documents. */
export type Processed = Array<{ changed: Map<number, string>; edits: Map<number, readonly Edit[]>; drops: Drop[] }>;

/** What processing every input gave: the run's shared tables, each input's changes, the decided workloads. */
export interface ProcessedRun {
  shared: SharedRun;
  processed: Processed;
  workloads: Array<WorkloadRecord & { input: number }>;
}

/**
 * Processes every input as one run: one namespace table over every input's Namespace objects (they win
 * over spec.namespaces entries), unknown namespaces reported once. Results are pushed to `results`. `run` is the
 * run's rendering state (`createRenderRun`), in force while each input is processed.
 * @throws MeshInjectError `BAD_INPUT` for a resource that cannot be composed
 */
export function processInputs(
  sources: readonly ParsedSource[],
  inputs: readonly RunInput[],
  config: Config,
  mesh: ActiveMesh,
  results: KrmResult[],
  opts: RunOptions,
  run: RenderRun,
): ProcessedRun {
  const processed: Processed = [];
  const workloads: Array<WorkloadRecord & { input: number }> = [];
  const pkg: { workloads: PackageWorkload[]; resources: PackageResource[] } = { workloads: [], resources: [] };
  const items = sources.flatMap((s) => s.items);
  const shared: SharedRun = {
    namespaces: collectNamespaces(items, config, results),
    services: collectServices(items, config),
    unknownNamespaces: new Map(),
    identities: identityTableFor(items, config),
    run,
  };
  if (opts.progress) {
    const total = sources.reduce((n, s) => n + s.items.length, 0);
    let done = 0;
    const progress = opts.progress;
    shared.onItem = () => progress(++done, total);
  }
  for (const f of opts.leftOutFiles ?? [])
    results.push(generalResult('info', `${f.path}: not an input, left out (${f.why})`));
  sources.forEach((source, i) => {
    for (const at of source.kindless ?? [])
      results.push(
        generalResult('warning', `${at}: document missing "kind" field, skipped (a null List item, left as it is)`),
      );
    const name = inputs[i]?.name;
    const manifestsOnly = inputs[i]?.manifestsOnly === true && !opts.check;
    const drops = opts.dropLocalConfig || manifestsOnly ? localConfigDrops(source, manifestsOnly, name) : [];
    if (manifestsOnly) results.push(...drops.map(leftOutResult));
    const out = processItems(source, config, mesh, name, shared);
    results.push(...out.results);
    processed.push({ changed: out.changed, edits: out.edits, drops });
    for (const w of out.workloads) workloads.push({ ...w, input: i });
    pkg.workloads.push(...out.pkg.workloads);
    pkg.resources.push(...out.pkg.resources);
  });
  results.push(...unknownNamespaceResults(shared.unknownNamespaces, config.unknownNamespaces));
  if (mesh.packageFindings)
    results.push(
      ...packageResults(
        mesh.packageFindings({ ...pkg, namespaces: shared.namespaces, config }),
        opts.check !== undefined,
      ),
    );
  return { shared, processed, workloads };
}

/**
 * A driver's findings about the package (`MeshDriver.packageFindings`) as results: in a check, errors tagged as
 * check findings (`meshinject.dev/check`, outcome and reason the rule); in an injection, warnings tagged with the rule.
 */
export function packageResults(findings: readonly PackageFinding[], check: boolean): KrmResult[] {
  return findings.map((f) =>
    resourceResult(check ? 'error' : 'warning', `${f.rule}: ${f.message}`, f.id, {
      ...(f.field ? { field: f.field } : {}),
      tags: check
        ? { 'meshinject.dev/check': 'true', 'meshinject.dev/outcome': f.rule, 'meshinject.dev/reason': f.rule }
        : { 'meshinject.dev/reason': f.rule },
    }),
  );
}
