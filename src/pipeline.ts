/**
 * The pipeline for one input: for every resource, in order, the recipe of the mode (`RECIPES`, lists of named
 * steps): inject and check `readWorkload → decide → previous → inject → write` (`write`: `annotate →
 * emitChanged → resultFor`), uninject `readWorkload → uninject → write` (a skipped workload still injected goes
 * through `uninjectWorkload` with `spec.removeWhenSkipped`), then the run-level results (unknown namespaces).
 * Mesh-neutral: everything mesh-specific is behind the `ActiveMesh` (src/contract/driver.ts).
 */
import type { Config, KindPolicy } from './model.ts';
import type { ActiveMesh, Inventory } from './contract/driver.ts';

export type { WorkloadRecord } from './check/findings.ts';
import type { Decision, KrmResult } from './model.ts';
import type { ParsedSource, SourceItem } from './krm/source.ts';
import { generalResult, resourceResult } from './results/result.ts';
import { completionOf } from './workloads/kinds.ts';
import { IdentityTable } from './krm/identity.ts';
import { createRenderRun, withRenderRun } from './render/run-state.ts';
import type { Outcome, ProcessOutput, RunContext, SharedRun, Workload } from './pipeline/context.ts';
import { checkIdentity } from './pipeline/identity.ts';
import { FAILED, orFailure } from './pipeline/failures.ts';
import { collectNamespaces, collectServices, unknownNamespaceResults } from './pipeline/namespaces.ts';
import { annotateOther, inputConfigMaps, keepForPackage, unannotateResource } from './pipeline/annotate.ts';
import {
  classicSidecars,
  decideOrReport,
  injectWorkload,
  kindPolicySkip,
  neverCompletes,
  previousInventory,
  readWorkload,
  uninjectWorkload,
  writeOutcome,
} from './pipeline/workload.ts';
export { collectNamespaces, collectServices, unknownNamespaceResults } from './pipeline/namespaces.ts';
export { resourceId } from './pipeline/identity.ts';
export {
  MODE_UNINJECT,
  NOT_INJECTED,
  RESULT_ANNOTATION,
  resultAnnotationValue,
  type ProcessOutput,
  type SharedRun,
} from './pipeline/context.ts';

/** What the steps of one workload's recipe have found so far. */
interface Flow {
  w: Workload;
  decision?: Decision;
  /** `spec.kindPolicies` for the workload's kind (`inject` when absent). */
  policy?: KindPolicy;
  previous?: Inventory;
  outcome?: Outcome | 'failed';
}

/** The flow's decision: `decide` runs first in every recipe that reads it (a step before it is a recipe out of order). */
function decisionOf(f: Flow): Decision {
  if (f.decision === undefined)
    throw new Error(`a recipe step read the decision of ${f.w.id.kind} ${f.w.id.name} before decide`);
  return f.decision;
}

/** The flow's outcome: `inject` or `uninject` ran and did not fail (a write step runs only then). */
function outcomeOf(f: Flow): Outcome {
  if (f.outcome === undefined || f.outcome === 'failed')
    throw new Error(`a write step ran for ${f.w.id.kind} ${f.w.id.name} without an outcome`);
  return f.outcome;
}

/** A named step of a recipe: reads and extends the flow; false stops the recipe (its result is pushed). */
interface Step {
  readonly name: string;
  run(f: Flow, ctx: RunContext, out: ProcessOutput): boolean;
}

/** `decideWorkload` (an error result stops), then the decision's warnings. */
const DECIDE: Step = {
  name: 'decide',
  run(f, ctx) {
    const decision = decideOrReport(f.w, ctx);
    if (!decision) return false;
    f.decision = decision;
    for (const warning of decision.warnings ?? []) ctx.results.push(resourceResult('warning', warning, f.w.id));
    return true;
  },
};

/** `spec.kindPolicies`: the kind's policy; `skip` turns an injection into a skip. */
const KIND_POLICY: Step = {
  name: 'kind-policy',
  run(f, ctx) {
    const policy = ctx.config.kindPolicies?.[f.w.wk.kind] ?? 'inject';
    f.policy = policy;
    const decision = decisionOf(f);
    if (policy === 'skip' && decision.inject) f.decision = kindPolicySkip(decision, f.w.wk.kind);
    return true;
  },
};

/**
 * A classic sidecar where the kind wants a native one (`kindPolicies: native`): skipped with a warning; on a kind
 * whose pods run to completion (Job, CronJob): a warning that they never complete.
 */
const CLASSIC_SIDECAR: Step = {
  name: 'classic-sidecar',
  run(f, ctx) {
    const outcome = f.outcome;
    if (outcome === undefined || outcome === 'failed' || outcome.action !== 'injected') return true;
    const classic = classicSidecars(f.w.pod, outcome.pod, ctx);
    const completion = completionOf(f.w.wk, outcome.pod);
    if (classic.length > 0 && f.policy === 'native') {
      f.decision = kindPolicySkip(
        decisionOf(f),
        f.w.wk.kind,
        `${ctx.mesh.name} injects a classic sidecar here (container ${classic.join(', ')}), not a native one`,
      );
      f.outcome = { action: 'skipped' };
    } else if (classic.length > 0 && completion)
      ctx.results.push(resourceResult('warning', neverCompletes(f.w.wk.kind, classic, completion), f.w.id));
    return true;
  },
};

/** What the input's pod template already carries from this mesh (for check and explain). */
const PREVIOUS: Step = {
  name: 'previous',
  run(f, ctx) {
    const previous = previousInventory(f.w, ctx);
    if (previous) f.previous = previous;
    return true;
  },
};

/**
 * `injectWorkload` (native sidecars on for `kindPolicies: native`); `warnStillInjected`: warn about a skipped
 * workload that still carries a sidecar.
 */
function injectStep(warnStillInjected: boolean): Step {
  return {
    name: 'inject',
    run(f, ctx) {
      const config = f.policy === 'native' ? { ...ctx.config, nativeSidecars: true } : ctx.config;
      f.outcome = injectWorkload(f.w, decisionOf(f), ctx, warnStillInjected, config);
      return true;
    },
  };
}

/** `uninjectWorkload` (an error result stops). */
const UNINJECT: Step = {
  name: 'uninject',
  run(f, ctx) {
    const outcome = uninjectWorkload(f.w, ctx);
    f.outcome = outcome;
    return outcome !== 'failed';
  },
};

/** `annotate → emitChanged → resultFor` (`writeOutcome`), then the workload's record for check and explain. */
const WRITE_AND_RECORD: Step = {
  name: 'write',
  run(f, ctx, out) {
    const done = f.outcome !== 'failed' ? writeOutcome(f.w, f.decision, outcomeOf(f), ctx, out) : undefined;
    const tags = done?.tags ?? {};
    out.workloads.push({
      position: f.w.item.position,
      id: f.w.id,
      namespace: f.w.ref.namespace,
      decision: decisionOf(f),
      ...(f.previous ? { previous: f.previous } : {}),
      ok: done?.written === true,
      ...(Object.keys(tags).length ? { tags } : {}),
    });
    return true;
  },
};

/** `annotate → emitChanged → resultFor` of an uninjected workload (no decision, no record). */
const WRITE: Step = {
  name: 'write',
  run(f, ctx, out) {
    writeOutcome(f.w, undefined, outcomeOf(f), ctx, out);
    return true;
  },
};

/** A mode's recipe: the steps of a workload after `readWorkload`, and what is done to any other resource. */
interface Recipe {
  readonly workload: readonly Step[];
  other(item: SourceItem, ctx: RunContext, changed: Map<number, string>): void;
}

/** The recipe of each `spec.mode` (`check` also for `meshinject check`): lists of named steps. */
const RECIPES: Readonly<Record<'inject' | 'uninject' | 'check', Recipe>> = {
  inject: {
    workload: [DECIDE, KIND_POLICY, PREVIOUS, injectStep(true), CLASSIC_SIDECAR, WRITE_AND_RECORD],
    other: annotateOther,
  },
  check: {
    workload: [DECIDE, KIND_POLICY, PREVIOUS, injectStep(false), CLASSIC_SIDECAR, WRITE_AND_RECORD],
    other: annotateOther,
  },
  uninject: { workload: [UNINJECT, WRITE], other: unannotateResource },
};

/**
 * One resource, as the recipe of its mode (`RECIPES`): a workload goes `readWorkload` then the recipe's steps in
 * order, until one stops; another resource gets the recipe's `other`.
 */
function processItem(item: SourceItem, ctx: RunContext, out: ProcessOutput): void {
  const recipe = RECIPES[ctx.config.mode ?? 'inject'];
  const w = readWorkload(item, ctx);
  if (!w) {
    keepForPackage(item, ctx, out);
    recipe.other(item, ctx, out.changed);
    return;
  }
  const flow: Flow = { w };
  for (const step of recipe.workload) if (!step.run(flow, ctx, out)) return;
}

/**
 * Decides and injects every workload of the input. Returns the new source text of each changed resource
 * (only the differing lines rewritten) and the results: one per workload (plus its warnings), then the
 * run-level ones. A workload whose injection fails gets an error result and is left unchanged. No I/O; each
 * resource's syntax tree and data (`item.node`, `item.value`) are released once processed, so afterwards only
 * the items' source ranges are valid.
 *
 * @param source the parsed input
 * @param config the validated core config
 * @param mesh the selected driver bound to its settings (`loadConfig(...).mesh`)
 * @param inputName the input's name for `file.path` of plain streams (CLI file argument)
 * @param shared when several inputs are one run: their namespace table, where unknown namespaces are
 *   counted (the run-level results are then left to the caller), and the run's rendering state (`SharedRun.run`;
 *   without one, a fresh run under the config's template budgets)
 */
export function processItems(
  source: ParsedSource,
  config: Config,
  boundMesh: ActiveMesh,
  inputName?: string,
  shared?: SharedRun,
): ProcessOutput {
  const run = shared?.run ?? createRenderRun(config.templateBudget ? { budgets: config.templateBudget } : {});
  return withRenderRun(run, () => processInRun(source, config, boundMesh, inputName, shared));
}

/** `processItems` with the run's rendering state in force. */
function processInRun(
  source: ParsedSource,
  config: Config,
  boundMesh: ActiveMesh,
  inputName: string | undefined,
  shared: SharedRun | undefined,
): ProcessOutput {
  const results: KrmResult[] = [];
  const adapted = orFailure(results, { stage: 'input' }, () =>
    boundMesh.fromInput((names) => inputConfigMaps(source.items, names)),
  );
  if (adapted === FAILED)
    return { changed: new Map(), edits: new Map(), results, workloads: [], pkg: { workloads: [], resources: [] } };
  const mesh = adapted.mesh;
  for (const note of adapted.notes) results.push(generalResult('info', note));
  const ctx: RunContext = {
    source,
    config,
    mesh,
    inputName,
    results,
    namespaces: shared?.namespaces ?? collectNamespaces(source.items, config, results),
    services: shared?.services ?? collectServices(source.items, config),
    unknownNamespaces: shared?.unknownNamespaces ?? new Map(),
    edits: new Map(),
    identities: shared?.identities ?? new IdentityTable(),
  };
  const out: ProcessOutput = {
    changed: new Map(),
    edits: ctx.edits,
    results,
    workloads: [],
    pkg: { workloads: [], resources: [] },
  };
  for (const item of source.items) {
    item.load();
    checkIdentity(item, ctx);
    processItem(item, ctx, out);
    // Only the source range is needed to write the output, and a large input then never holds every
    // resource's syntax tree at once (peak memory).
    item.release();
    shared?.onItem?.();
  }
  if (!shared) results.push(...unknownNamespaceResults(ctx.unknownNamespaces, config.unknownNamespaces));
  return out;
}
