/**
 * The state of one run's rendering, as a value (issue #35 item 4): its template budgets and their counters
 * (`Meter`, ./budget.ts), its plan switches, counters and planners' caches (`PlanRun`, ./plans.ts), and the
 * Handlebars engine's bookkeeping of the render under way (`HbsRender`, ./engine.ts).
 *
 * A run's object is made where the run starts (src/run.ts `runInputs` from `RunOptions`; src/pipeline.ts
 * `processItems` for library use) and passed down to the pipeline, which puts it in force (`withRenderRun`) while
 * it processes the run's resources. The drivers and template engines below reach it here: the functions a
 * template calls (a sprig `repeat`, a Handlebars helper) get the template's arguments only. Nothing outlives a
 * run: a render outside any run (a driver or engine called directly) runs in a run of its own, under the default
 * budgets and without plans, so two runs, one after the other, count and cache apart.
 */
import { createMeter, type Meter, type TemplateBudgets } from './budget.ts';
// Types only: the engines below (./gotemplate/) reach this module through ./budget.ts, and do not load the plans.
import type { PlanRun, RunPlanSettings } from './plans.ts';

/** The Handlebars engine's record of the render under way (./engine.ts). */
export interface HbsRender {
  /**
   * Where the last helper or block ran (Handlebars `options.loc`), or the last partial called (partials get no
   * `loc`): the place a budget error names.
   */
  lastLoc: { line: number; column: number } | { partial: string } | undefined;
  /** Per block or partial under way, the length of the text its nested blocks wrote (so each character counts once). */
  readonly written: number[];
}

/** The rendering state of one run (see the module comment). */
export interface RenderRun {
  /** Budgets and counters (./budget.ts). */
  readonly meter: Meter;
  /** Plan switches, counters and the planners' caches (./plans.ts). */
  readonly plans: PlanRun;
  /** The Handlebars render under way (./engine.ts). */
  readonly hbs: HbsRender;
}

/** What a run is made from: the config's budgets (`spec.templateBudget`) and the run's plan switches. */
export interface RenderRunOptions {
  /** Lowered budgets; absent fields take the defaults, and each is capped at its ceiling (./budget.ts). */
  budgets?: Partial<TemplateBudgets>;
  /** Plan switches and counters (`RunOptions.plans` of src/run.ts); unset fields take the defaults. */
  plans?: RunPlanSettings;
}

/**
 * A fresh run: budgets in force from `opts.budgets` (capped at the ceilings), counters at zero, empty caches.
 * Plans are on unless `opts.plans.enabled` is false; verified when `opts.plans.verify` is true or, left unset,
 * when the test suite's preload asks for it (test/setup/verify-plans.mjs).
 */
export function createRenderRun(opts: RenderRunOptions = {}): RenderRun {
  return {
    meter: createMeter(opts.budgets),
    plans: planRunOf(opts.plans ?? {}),
    hbs: { lastLoc: undefined, written: [] },
  };
}

/**
 * The plans of a fresh run: switches from `s` (plans on, recorded at a shape's first workload, verified when
 * `verify` is unset and the test suite's preload asks for it), counters `s.stats` or zero, no caches.
 */
function planRunOf(s: RunPlanSettings): PlanRun {
  return {
    settings: {
      enabled: s.enabled ?? true,
      verify: s.verify ?? verifyPreload(),
      recordOnRepeat: s.recordOnRepeat ?? false,
    },
    stats: s.stats ?? { lookups: 0, hits: 0, recorded: 0, full: 0, keyed: 0 },
    caches: new Map(),
    identities: new WeakMap(),
    nextIdentity: 1,
  };
}

/** Set by the test suite's preload (test/setup/verify-plans.mjs), where no CLI runs: plans verified in-process too. */
const VERIFY_GLOBAL = Symbol.for('meshinject.verifyPlans');

/** Whether the test suite's preload turned plan verification on (read once per run, when it is made). */
function verifyPreload(): boolean {
  // biome-ignore lint/style/noRestrictedGlobals: the test suite's preload sets this flag (test/setup/verify-plans.mjs); read once per run, where the run is made
  return (globalThis as Record<symbol, unknown>)[VERIFY_GLOBAL] === true;
}

/**
 * The run in force, while a run processes its resources (`withRenderRun`).
 * Module state by design: the dynamic extent of one synchronous run, set by `withRenderRun` and restored when it
 * returns or throws, so it holds nothing between runs; the functions templates call are reached with the
 * template's arguments only and find their run here.
 */
let inForce: RenderRun | undefined;

/** The run in force, or undefined outside a run. */
export function runInForce(): RenderRun | undefined {
  return inForce;
}

/** Runs `f` with `run` in force; the run in force before is restored after, also when `f` throws. */
export function withRenderRun<T>(run: RenderRun, f: () => T): T {
  const outer = inForce;
  inForce = run;
  try {
    return f();
  } finally {
    inForce = outer;
  }
}
