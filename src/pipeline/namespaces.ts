/**
 * The run's namespace and Service tables, read from the input's Namespace and Service objects and `spec.namespaces`, and the results for unknown namespaces.
 */
import type { Config } from '../model.ts';

import type { KrmResult, NamespaceInfo, ServiceInfo } from '../model.ts';
import type { SourceItem } from '../krm/source.ts';
import { generalResult } from '../results/result.ts';
import { NS_NAME_LABEL } from '../selection/policy.ts';

import { obj, str, stringMap } from './context.ts';

/**
 * The namespaces known to this run: `Namespace` objects in the list win over `spec.namespaces` entries of
 * the same name, with a warning naming both (pushed to `results`).
 */
export function collectNamespaces(
  items: readonly SourceItem[],
  config: Config,
  results: KrmResult[] = [],
): Map<string, NamespaceInfo> {
  const out = new Map<string, NamespaceInfo>();
  const fromConfig = new Set<string>();
  for (const n of config.namespaces) {
    out.set(n.name, n);
    fromConfig.add(n.name);
  }
  for (const it of items) {
    if (it.kind !== 'Namespace') continue;
    const v = obj(it.value);
    if (v?.kind !== 'Namespace' || str(v.apiVersion) !== 'v1') continue;
    const meta = obj(v.metadata);
    const name = str(meta?.name);
    if (!name) continue;
    if (fromConfig.has(name)) {
      results.push(
        generalResult(
          'warning',
          `Namespace ${name} is both an object in the input and an entry of spec.namespaces: the input's Namespace object is used, the spec.namespaces entry is ignored`,
          'spec.namespaces',
        ),
      );
      fromConfig.delete(name);
    }
    out.set(name, { name, labels: stringMap(meta?.labels), annotations: stringMap(meta?.annotations) });
  }
  return out;
}

/**
 * The `Service` objects (`v1`) of the input by namespace (a Service without `metadata.namespace` is in
 * `config.defaultNamespace`), in input order, for `InjectRequest.services`.
 */
export function collectServices(items: readonly SourceItem[], config: Config): Map<string, ServiceInfo[]> {
  const out = new Map<string, ServiceInfo[]>();
  for (const it of items) {
    if (it.kind !== 'Service') continue;
    const v = obj(it.value);
    if (v?.kind !== 'Service' || str(v.apiVersion) !== 'v1') continue;
    const meta = obj(v.metadata);
    const name = str(meta?.name) ?? '';
    const namespace = str(meta?.namespace) || config.defaultNamespace;
    const service = {
      name,
      namespace,
      labels: stringMap(meta?.labels),
      annotations: stringMap(meta?.annotations),
      selector: stringMap(obj(v.spec)?.selector),
    };
    out.set(namespace, [...(out.get(namespace) ?? []), service]);
  }
  return out;
}

/**
 * Run-level results: each unknown namespace a decision needed, once; a warning, or an error under
 * `spec.unknownNamespaces: error` (`Config.unknownNamespaces`), which fails the run (exit 1, nothing written).
 */
export function unknownNamespaceResults(
  unknownNamespaces: ReadonlyMap<string, number>,
  setting: Config['unknownNamespaces'],
): KrmResult[] {
  const error = setting === 'error';
  const fix = error
    ? '; add it to spec.namespaces with its labels, or set spec.unknownNamespaces: warn or assume-selected'
    : '';
  return [...unknownNamespaces].map(([ns, count]) =>
    generalResult(
      error ? 'error' : 'warning',
      `namespace ${ns} is neither a Namespace object in the input nor listed in spec.namespaces; its labels are unknown, only ${NS_NAME_LABEL}=${ns} was used (${count} workload${count === 1 ? '' : 's'} skipped on that basis)${fix}`,
    ),
  );
}
