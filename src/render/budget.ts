/**
 * Template budgets (issue 19): both template engines (Handlebars, `./engine.ts`; Go text/template,
 * `./gotemplate/`) run under a step budget and an output-size budget, per render and per run, so that a
 * template a tenant writes (ten nested loops, partials that call each other twice, `until 30000000`,
 * `repeat` bombs) ends in seconds as an error result naming the template, its line and the budget, and never
 * runs for hours or exhausts the heap.
 *
 * What counts as a step: every action, loop iteration, `template`/partial call, function or helper call, and
 * the work a function does (issue 36): each element of a list it returns or a list argument it is given, each
 * `CHARS_PER_STEP` characters of a text it returns or is given, and each node a serialiser or comparison walks
 * (`toJSONValue`, Go `fmt`, `goSprint`, `toYaml`, `spendWalk` before `JSON.stringify`), a part shared N times
 * counted N times. The engines charge arguments and results at the one place every call passes (Go: `call` in
 * ./gotemplate/exec.ts; Handlebars: `countedHelper` in ./engine.ts), so a new function is charged without saying
 * so. What counts as output: the characters (UTF-16 code units) a render writes. A builder (`repeat`, `indent`,
 * `join`, `printf` widths, `until`, ...) checks the size of its result before it allocates it: no single built
 * text may exceed the output budget of a render, no list the step budget, and no Handlebars helper result a size
 * (shared parts counted each time) past the step budget (`checkValueSize`).
 *
 * Per run: the steps and output of every render of the run add up. A workload served by a sidecar plan
 * (`./plans.ts`) is charged what the render that recorded the plan cost, so the run's count is the same with
 * plans on or off; the planner's own renders (recording, verification) count only against the per-render
 * budget.
 *
 * The meter is part of the run's state (`Meter`, a field of `RenderRun` of ./run-state.ts): made per run with
 * the config's budgets (capped at the ceilings), counters at zero; renders are synchronous, and these functions
 * count against the meter of the run in force.
 */
import { InjectError } from '../results/errors.ts';
import { planText } from './plan-values.ts';
import { createRenderRun, runInForce, withRenderRun } from './run-state.ts';

/** The budgets of template rendering; a config may lower each, never raise it past `TEMPLATE_BUDGET_CEILINGS`. */
export interface TemplateBudgets {
  /** Steps one render may take. */
  steps: number;
  /** Characters one render may write; also the largest string a builder may make. */
  outputSize: number;
  /** Steps all renders of a run may take together. */
  runSteps: number;
  /** Characters all renders of a run may write together. */
  runOutputSize: number;
}

/**
 * Defaults, from measured renders: Istio's sidecar template takes about 200 steps (Go engine, Istio 1.26.0
 * chart) to 400 steps (built-in Handlebars port) and writes about 5 200 characters per workload. One render may
 * take 1 000 times that (a render that uses all of it stops in about a second); a run may render 500 000 such
 * workloads (five times the 100 000 of bench/RESULTS.md).
 */
export const DEFAULT_TEMPLATE_BUDGETS: Readonly<TemplateBudgets> = {
  steps: 500_000,
  outputSize: 4 * 1024 * 1024,
  runSteps: 250_000_000,
  runOutputSize: 4 * 1024 * 1024 * 1024,
};

/** Hard ceilings: what a config may set at most (the schema says so too). */
export const TEMPLATE_BUDGET_CEILINGS: Readonly<TemplateBudgets> = {
  steps: 10_000_000,
  outputSize: 64 * 1024 * 1024,
  runSteps: 2_500_000_000,
  runOutputSize: 16 * 1024 * 1024 * 1024,
};

/**
 * A budget ran out: the message names the budget. A `TEMPLATE` error (an error result for the workload); the
 * engines add the template's name and line.
 */
export class BudgetExceeded extends InjectError {
  constructor(message: string) {
    super(message, { code: 'TEMPLATE' });
    this.name = 'BudgetExceeded';
  }
}

/** Steps and characters, as counted. */
export interface Cost {
  steps: number;
  output: number;
}

/** A render's count, and the sizes of the values its functions built (see `checkValueSize`). */
interface RenderCount extends Cost {
  sizes?: WeakMap<object, number>;
}

/**
 * The meter of one run (a field of its `RenderRun`, ./run-state.ts): its budgets, what its renders were charged,
 * and the render under way.
 */
export interface Meter {
  /** The budgets in force: the config's, capped at the ceilings. */
  readonly limits: Readonly<TemplateBudgets>;
  /** What the run was charged: every render's steps and output, planner bookkeeping aside. */
  readonly run: Cost;
  /** Everything counted, charged or not: `measure` takes differences. */
  readonly total: Cost;
  /** The render under way (renders nest: a helper may render; the outer one counts). */
  current: RenderCount | undefined;
  /** Depth of planner bookkeeping: renders inside count against the render budget only. */
  uncharged: number;
}

/** A run's meter: its budgets (`budgets`' fields capped at the ceilings; absent ones take the defaults), counters at zero. */
export function createMeter(budgets: Partial<TemplateBudgets> = {}): Meter {
  const pick = (k: keyof TemplateBudgets): number =>
    Math.min(budgets[k] ?? DEFAULT_TEMPLATE_BUDGETS[k], TEMPLATE_BUDGET_CEILINGS[k]);
  return {
    limits: {
      steps: pick('steps'),
      outputSize: pick('outputSize'),
      runSteps: pick('runSteps'),
      runOutputSize: pick('runOutputSize'),
    },
    run: { steps: 0, output: 0 },
    total: { steps: 0, output: 0 },
    current: undefined,
    uncharged: 0,
  };
}

/** The meter of the run in force (undefined outside a run). */
function meter(): Meter | undefined {
  return runInForce()?.meter;
}

/** The budgets in force: the run's, or the defaults outside a run. */
function limitsInForce(): Readonly<TemplateBudgets> {
  return meter()?.limits ?? DEFAULT_TEMPLATE_BUDGETS;
}

/**
 * Runs one render under the per-render budget (a render inside a render counts in the outer one). Outside a run
 * (a driver or engine called directly) the render runs in a run of its own (`createRenderRun`, ./run-state.ts).
 * @throws whatever `f` throws (a `BudgetExceeded` from the counters below)
 */
export function metered<T>(f: () => T): T {
  const m = meter();
  if (!m) return withRenderRun(createRenderRun(), () => metered(f));
  if (m.current) return f();
  m.current = { steps: 0, output: 0 };
  try {
    return f();
  } finally {
    m.current = undefined;
  }
}

/** Runs planner bookkeeping (`f`): its renders count against the per-render budget only. */
export function withoutRunCharge<T>(f: () => T): T {
  const m = meter();
  if (!m) return f();
  m.uncharged++;
  try {
    return f();
  } finally {
    m.uncharged--;
  }
}

/** The steps and output counted while `f` ran (charged or not), with its value. */
export function measure<T>(f: () => T): { value: T; cost: Cost } {
  const total = meter()?.total;
  const s = total?.steps ?? 0;
  const o = total?.output ?? 0;
  const value = f();
  return { value, cost: total ? { steps: total.steps - s, output: total.output - o } : { steps: 0, output: 0 } };
}

/**
 * Charges a plan's cost to the run, for a workload a plan served.
 * @throws BudgetExceeded when the run's budget is spent
 */
export function chargeRun(cost: Cost): void {
  const m = meter();
  if (!m || m.uncharged > 0) return;
  m.run.steps += cost.steps;
  m.run.output += cost.output;
  checkRun(m);
}

function checkRun(m: Meter): void {
  const { run, limits } = m;
  if (run.steps > limits.runSteps)
    throw new BudgetExceeded(
      `the run went past its template step budget of ${limits.runSteps} steps (spec.templateBudget.runSteps)`,
    );
  if (run.output > limits.runOutputSize)
    throw new BudgetExceeded(
      `the run went past its template output budget of ${limits.runOutputSize} characters (spec.templateBudget.runOutputSize)`,
    );
}

/**
 * Counts `n` steps of the render under way (outside a render: the run's only; outside a run: nothing).
 * @throws BudgetExceeded naming the budget when the render's or the run's steps are spent
 */
export function spendSteps(n = 1): void {
  const m = meter();
  if (!m) return;
  m.total.steps += n;
  const current = m.current;
  if (current) {
    current.steps += n;
    if (current.steps > m.limits.steps)
      throw new BudgetExceeded(
        `went past the step budget of one render, ${m.limits.steps} steps (spec.templateBudget.steps; loops, template and partial calls, function calls and the work they do: elements built, nodes serialised or compared, text read and built)`,
      );
  }
  if (m.uncharged === 0) {
    m.run.steps += n;
    checkRun(m);
  }
}

/**
 * Counts `n` characters written by the render under way.
 * @throws BudgetExceeded when the render's or the run's output budget is spent
 */
export function spendOutput(n: number): void {
  const m = meter();
  if (!m) return;
  m.total.output += n;
  const current = m.current;
  if (current) {
    current.output += n;
    if (current.output > m.limits.outputSize)
      throw new BudgetExceeded(
        `went past the output budget of one render, ${m.limits.outputSize} characters (spec.templateBudget.outputSize)`,
      );
  }
  if (m.uncharged === 0) {
    m.run.output += n;
    checkRun(m);
  }
}

/**
 * Refuses, before it is made, a string of `size` characters larger than the output budget of a render
 * (`what` names the builder, e.g. `repeat`).
 * @throws BudgetExceeded
 */
export function checkBuild(size: number, what: string): void {
  const limits = limitsInForce();
  if (!(size <= limits.outputSize))
    throw new BudgetExceeded(
      `${what} would build ${Number.isFinite(size) ? `${size} characters` : 'an unbounded text'}, more than the output budget of one render, ${limits.outputSize} characters (spec.templateBudget.outputSize)`,
    );
}

/**
 * Refuses, before it is made, a list of `length` elements longer than the step budget of a render (`until
 * 30000000` is refused without allocating). The elements are charged when the list comes back: the Go engine
 * charges every slice a function returns a step per element (`./gotemplate/exec.ts`).
 * @throws BudgetExceeded
 */
export function checkList(length: number, what: string): void {
  const limits = limitsInForce();
  if (!(length <= limits.steps))
    throw new BudgetExceeded(
      `${what} would build a list of ${length} elements, more than the step budget of one render, ${limits.steps} steps (spec.templateBudget.steps)`,
    );
}

/**
 * Characters of text a function builds, or a serialiser reads, that count as one step: text is charged as work
 * (a step per 64 UTF-16 code units) besides the output budget it is written against.
 */
export const CHARS_PER_STEP = 64;

/**
 * Counts `n` steps of work a template function does inside a render (a node a serialiser or comparison walks, an
 * element a builder copies); outside a render it counts nothing (drivers call the same walkers to build data).
 * @throws BudgetExceeded naming the budget when the render's or the run's steps are spent
 */
export function spendWork(n = 1): void {
  if (meter()?.current) spendSteps(n);
}

/**
 * Counts the text a template function returned: refused past the output budget of a render (`checkBuild`), and a
 * step per `CHARS_PER_STEP` characters inside a render, so a loop that builds large texts it never writes stops at
 * the step budget.
 * @throws BudgetExceeded
 */
export function spendBuilt(length: number, what: string): void {
  if (length > limitsInForce().outputSize) checkBuild(length, what);
  if (meter()?.current && length >= CHARS_PER_STEP) spendSteps(Math.floor(length / CHARS_PER_STEP));
}

/**
 * Refuses a value a template function built (a Handlebars helper's result) whose size is past the step budget of
 * one render: the size counts every array element and object entry, a part shared N times N times (what a
 * serialiser would write), a string as 1 + length / `CHARS_PER_STEP`; a plan placeholder counts 1. Sizes are
 * remembered per render, so `list $a $a` costs two lookups, not a walk, and values that double at each step are
 * refused after a few doublings, before any serialiser sees them. Outside a render nothing is checked.
 * @throws BudgetExceeded naming `what` and the step budget
 */
export function checkValueSize(v: unknown, what: string): void {
  const m = meter();
  const current = m?.current;
  if (!m || !current || typeof v !== 'object' || v === null) return;
  const limits = m.limits;
  current.sizes ??= new WeakMap();
  const size = sizeOf(v, current.sizes, limits.steps);
  if (size > limits.steps) {
    throw new BudgetExceeded(
      `${what} would build a value of more than ${limits.steps} elements (a shared part counts each time it appears), more than the step budget of one render, ${limits.steps} steps (spec.templateBudget.steps)`,
    );
  }
}

/**
 * Counts the work of walking `v` (a serialiser or comparison about to read it whole, e.g. `JSON.stringify`): a
 * step per array element and object entry, shared parts each time they appear, and a string's length per
 * `CHARS_PER_STEP`; a plan placeholder is one step. Stops with the error as soon as the budget is spent, so a
 * value that shares itself exponentially costs no more than the budget to refuse. Outside a render nothing.
 * @throws BudgetExceeded naming the budget
 */
export function spendWalk(v: unknown): void {
  if (!meter()?.current) return;
  if (typeof v === 'string') {
    if (v.length >= CHARS_PER_STEP) spendSteps(Math.floor(v.length / CHARS_PER_STEP));
    return;
  }
  spendSteps(1);
  if (typeof v !== 'object' || v === null || planText(v)) return;
  if (Array.isArray(v)) for (const x of v) spendWalk(x);
  else for (const k of Object.keys(v)) spendWalk((v as Record<string, unknown>)[k]);
}

/** The size `checkValueSize` measures, stopping once past `cap` (then any number above it). */
function sizeOf(v: unknown, memo: WeakMap<object, number>, cap: number): number {
  if (typeof v === 'string') return 1 + Math.floor(v.length / CHARS_PER_STEP);
  if (typeof v !== 'object' || v === null || planText(v)) return 1;
  const known = memo.get(v);
  if (known !== undefined) return known;
  let n = 1;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length && n <= cap; i++) n += sizeOf(v[i], memo, cap);
  } else {
    for (const k of Object.keys(v)) {
      n += 1 + sizeOf((v as Record<string, unknown>)[k], memo, cap);
      if (n > cap) break;
    }
  }
  memo.set(v, n);
  return n;
}

/**
 * Refuses, before it is made, an indented text past the output budget of a render: `n` spaces on every
 * line of `s` (sprig and Istio `indent`, `nindent`, `indentBlock`).
 * @throws BudgetExceeded
 */
export function checkIndent(n: unknown, s: string): void {
  let lines = 1;
  for (let i = s.indexOf('\n'); i >= 0; i = s.indexOf('\n', i + 1)) lines++;
  checkBuild(s.length + Math.max(0, Number(n) || 0) * lines, 'indent');
}
