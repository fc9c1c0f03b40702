/**
 * `meshinject migrate --to TARGET --namespace NS ...`: the package moved to another data plane of its mesh for
 * the given namespaces, as the driver plans it (`MeshDriver.migration`). Mesh-neutral: this file reads the
 * inputs' resources to the driver (a workload also uninjected, `uninjectPod`), and turns the driver's changes
 * into edits of the input text with the same text editor as injection (only the changed lines rewritten), new
 * resources after the resource the driver names, removed ones cut out with their separator. Pure; the run
 * (`runMigration`, src/run.ts) reads the inputs and the config and writes all or nothing.
 */
import type { ActiveMesh, MigrationPlan, MigrationResource } from './contract/driver.ts';
import type { Config } from './model.ts';
import type { Edit } from './krm/write.ts';
import type { JsonObject, KrmResult } from './model.ts';
import type { ParsedSource, SourceItem } from './krm/source.ts';
import { defined } from './checked.ts';
import { isJsonObject } from './json.ts';
import { emitChangedEdits } from './edit/rewrite.ts';
import { resourceId } from './pipeline.ts';
import { uninjectPod } from './patch/uninject.ts';
import { errorTags, MeshInjectError } from './results/errors.ts';
import { exitCodeOf, resourceResult } from './results/result.ts';
import { getPodTemplate, holdsPodTemplate, isProblem, withPodTemplate } from './workloads/pod-template.ts';
import { lookupWorkloadKind } from './workloads/kinds.ts';
import { stringify } from 'yaml';

/** What to migrate: `--to`, `--namespace` (one or more), and the driver's options (`--waypoint`). */
export interface MigrateRequest {
  to: string;
  namespaces: readonly string[];
  options: Readonly<Record<string, string>>;
}

/** A resource of the inputs: its input, item, and what the driver reads of it. */
interface Located {
  input: number;
  source: ParsedSource;
  item: SourceItem;
  resource: MigrationResource;
}

/**
 * The migration of the parsed inputs (`names`: each input's name) as edits of each input's text, by input, with a
 * result per change, addition and note pushed to `results` (an error result for a workload that cannot be
 * uninjected or a change that cannot be written faithfully: the caller then writes nothing); or the message of a
 * request the driver refuses or cannot serve (`--to` unknown; a driver without migration).
 */
export function migrationEdits(
  sources: readonly ParsedSource[],
  names: ReadonlyArray<string | undefined>,
  config: Config,
  mesh: ActiveMesh,
  req: MigrateRequest,
  results: KrmResult[],
): Map<number, Edit[]> | { error: string } {
  if (!mesh.migration) return { error: `meshinject migrate: the ${mesh.name} driver has no migration` };
  const located = locate(sources, names, config, mesh, results);
  if (exitCodeOf(results) !== 0) return new Map();
  const plan = mesh.migration.plan({
    to: req.to,
    namespaces: req.namespaces,
    options: req.options,
    resources: located.map((l) => l.resource),
    config,
  });
  if ('error' in plan) return plan;
  return editsOf(plan, located, results);
}

/** Every resource of the inputs (local config left out), a workload with its pod template path and its uninjected self. */
function locate(
  sources: readonly ParsedSource[],
  names: ReadonlyArray<string | undefined>,
  config: Config,
  mesh: ActiveMesh,
  results: KrmResult[],
): Located[] {
  const out: Located[] = [];
  sources.forEach((source, input) => {
    for (const item of source.items) {
      item.load();
      const value = isJsonObject(item.value) ? item.value : undefined;
      if (!value) continue;
      const id = resourceId(item, source, names[input]);
      const wk = lookupWorkloadKind(String(value.apiVersion ?? ''), String(value.kind ?? ''), config.workloadKinds);
      const resource: MigrationResource = { id, value };
      if (wk && holdsPodTemplate(value, wk)) {
        const pod = getPodTemplate(value, wk);
        let uninjected: JsonObject | undefined;
        try {
          const done = isProblem(pod)
            ? undefined
            : uninjectPod(mesh, pod, {
                workload: {
                  apiVersion: id.apiVersion,
                  kind: id.kind,
                  name: id.name,
                  namespace: id.namespace ?? config.defaultNamespace,
                  namespaceDefaulted: id.namespace === undefined,
                },
                config,
              });
          if (done) uninjected = withPodTemplate(value, wk, done.pod, { dropEmptyMetadata: true }) as JsonObject;
        } catch (e) {
          if (!(e instanceof MeshInjectError)) throw e;
          results.push(
            resourceResult('error', `${id.kind} "${id.name}": ${e.message}`, id, { tags: errorTags(e.code) }),
          );
        }
        resource.workload = { templatePath: wk.templatePath, ...(uninjected ? { uninjected } : {}) };
      }
      out.push({ input, source, item, resource });
    }
  });
  return out;
}

/** The plan as edits of each input's text (by input), with a result per change, addition and note. */
function editsOf(plan: MigrationPlan, located: readonly Located[], results: KrmResult[]): Map<number, Edit[]> {
  const edits = new Map<number, Edit[]>();
  const push = (input: number, e: readonly Edit[]) => edits.set(input, [...(edits.get(input) ?? []), ...e]);
  const tags = { 'meshinject.dev/outcome': 'migrated', 'meshinject.dev/reason': 'migrate' };
  for (const c of plan.changes) {
    const l = defined(located[c.index], 'the resource a migration change names');
    const source = l.source;
    if (c.value === null) {
      const at = source.items.indexOf(l.item);
      const prevEnd = at > 0 ? (source.items[at - 1]?.end ?? 0) : 0;
      push(l.input, [{ start: prevEnd, end: l.item.end, text: '' }]);
    } else {
      try {
        const done = emitChangedEdits(l.item, source, c.value);
        if (done) push(l.input, done.edits);
      } catch (e) {
        if (!(e instanceof MeshInjectError)) throw e;
        results.push(resourceResult('error', e.message, l.resource.id, { tags: errorTags(e.code) }));
        continue;
      }
    }
    results.push(resourceResult('info', `migrated: ${c.summary}`, l.resource.id, { tags }));
  }
  for (const a of plan.additions) {
    const l = defined(located[a.after], 'the resource a migration addition follows');
    const text = l.source.text;
    const lead = text.slice(0, l.item.end).endsWith('\n') ? '' : '\n';
    push(l.input, [
      {
        start: l.item.end,
        end: l.item.end,
        text: `${lead}---\n${stringify(a.value, { lineWidth: 0, indentSeq: false })}`,
      },
    ]);
    const meta = isJsonObject(a.value.metadata) ? a.value.metadata : {};
    const id = {
      apiVersion: String(a.value.apiVersion),
      kind: String(a.value.kind),
      name: String(meta.name ?? ''),
      ...(typeof meta.namespace === 'string' ? { namespace: meta.namespace } : {}),
    };
    results.push(resourceResult('info', `added: ${a.summary}`, id, { tags }));
  }
  for (const n of plan.notes) {
    results.push(
      resourceResult(n.severity, `${n.rule}: ${n.message}`, n.id, {
        ...(n.field ? { field: n.field } : {}),
        tags: { 'meshinject.dev/reason': n.rule },
      }),
    );
  }
  return edits;
}
