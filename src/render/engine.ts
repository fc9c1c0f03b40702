/**
 * The Handlebars template engine drivers render with. Each engine is one isolated Handlebars environment
 * with the shared helpers (`./template-functions.ts`) plus the driver's own registered, compiled templates
 * cached by name. Strict mode (a missing field in a `{{mustache}}` throws), no HTML escaping (the output is
 * YAML), and prototype access left at Handlebars' safe default (off). Every render runs under the template
 * budgets (`./budget.ts`): each helper call, block run (an `#each` iteration, an `#if` branch) and partial call is
 * a step, the text each block writes is output, and a helper's result past the output budget is refused.
 */
import Handlebars from 'handlebars';
import { setOwn } from '../json.ts';
import { InjectError } from '../results/errors.ts';
import { TEMPLATE_FUNCTIONS, type Helper } from './template-functions.ts';
import { SHARED_PLAN_RULES, planned, type PlanRule } from './plan-helpers.ts';
import {
  BudgetExceeded,
  CHARS_PER_STEP,
  checkValueSize,
  metered,
  spendBuilt,
  spendOutput,
  spendSteps,
} from './budget.ts';
import { templateOf } from './hbs-runtime.ts';
import { createRenderRun, runInForce, withRenderRun, type HbsRender } from './run-state.ts';

/**
 * The record of the Handlebars render under way (`HbsRender` of ./run-state.ts): where the last helper, block or
 * partial ran, and the text each block under way wrote. A render always runs in a run (`metered`).
 */
function hbsRender(): HbsRender {
  const run = runInForce();
  if (!run)
    throw new Error('a Handlebars block ran outside a render (engine.ts `budgeted` puts every render in a run)');
  return run.hbs;
}

type Block = (this: unknown, ...a: unknown[]) => string;
const COUNTED = Symbol('counted');

/**
 * A block (`options.fn`/`inverse`) or partial that counts a step per run and the text it writes itself.
 * Handlebars passes a fresh function per block call except the empty branch (`inverse` of an `#if` without
 * `else`), which is one shared `noop`: its counted form is made once.
 */
function countedBlock(fn: Block): Block {
  if ((fn as { [COUNTED]?: true })[COUNTED]) return fn;
  if (fn === NOOP) return COUNTED_NOOP;
  return counting(fn);
}

/** `fn` wrapped to count a step per run and the text it writes itself, marked as counted. */
function counting(fn: Block): Block {
  const w: Block = function (this: unknown) {
    spendSteps(1);
    const { written } = hbsRender();
    written.push(0);
    let out: string;
    let nested = 0;
    try {
      // biome-ignore lint/complexity/noArguments: passed on as it is (no rest array on the render's hottest path; bench/run.ts)
      out = fn.apply(this, arguments as unknown as unknown[]); // IArguments is array-like, not an array type
    } finally {
      nested = written.pop() ?? 0;
    }
    if (typeof out === 'string') {
      const last = written.length - 1;
      const outer = written[last];
      if (outer !== undefined) written[last] = outer + out.length;
      spendOutput(Math.max(0, out.length - nested));
    }
    return out;
  };
  (w as { [COUNTED]?: true })[COUNTED] = true;
  return w;
}

/** Handlebars' empty block (`Handlebars.VM.noop`, one function for every environment). */
// Handlebars' typings declare `VM` without `noop` (its runtime sets it: lib/handlebars/runtime.js).
const NOOP = (Handlebars as unknown as { VM: { noop: Block } }).VM.noop;
/** Its counted form, made once. */
const COUNTED_NOOP = counting(NOOP);

/**
 * A helper that counts a step per call, counts its blocks, and pays for what it reads and makes (every helper,
 * shared, a driver's or Handlebars' own, by construction): before it runs, a step per `CHARS_PER_STEP` characters
 * of each text argument and per element of each list argument (block helpers pay per block run instead); after,
 * a text result is charged (`spendBuilt`: refused past the output budget) and an object or list result is refused
 * when its size, shared parts counted each time, is past the step budget (`checkValueSize`).
 */
function countedHelper(name: string, fn: Helper): Helper {
  return function (this: unknown) {
    // biome-ignore lint/complexity/noArguments: read in place, no rest array on the render's hottest path (bench/run.ts)
    const last = arguments.length - 1;
    // biome-ignore lint/complexity/noArguments: read in place, no rest array on the render's hottest path (bench/run.ts)
    const options = arguments[last] as
      | { loc?: { start: { line: number; column: number } }; fn?: Block; inverse?: Block }
      | undefined;
    let block = false;
    if (options && typeof options === 'object') {
      if (options.loc) hbsRender().lastLoc = options.loc.start;
      const fnBlock = options.fn;
      block = typeof fnBlock === 'function';
      if (typeof fnBlock === 'function') options.fn = countedBlock(fnBlock);
      if (typeof options.inverse === 'function') options.inverse = countedBlock(options.inverse);
    }
    let work = 1;
    if (!block) {
      for (let i = 0; i < last; i++) {
        // biome-ignore lint/complexity/noArguments: read in place, no rest array on the render's hottest path (bench/run.ts)
        const a: unknown = arguments[i];
        if (typeof a === 'string') work += Math.floor(a.length / CHARS_PER_STEP);
        else if (Array.isArray(a)) work += a.length;
      }
    }
    spendSteps(work);
    // biome-ignore lint/complexity/noArguments: passed on as it is (no rest array on the render's hottest path; bench/run.ts)
    const out = fn.apply(this, arguments as unknown as unknown[]); // IArguments is array-like, not an array type
    if (typeof out === 'string') spendBuilt(out.length, name);
    else if (typeof out === 'object' && out !== null) checkValueSize(out, name);
    return out;
  };
}

/** Puts an environment's helpers (its own and the built-in `each`, `if`, ...) and partial calls under the budgets. */
function instrument(env: typeof Handlebars): void {
  for (const [name, fn] of Object.entries(env.helpers))
    setOwn(env.helpers, name, countedHelper(name, fn as Helper) as Handlebars.HelperDelegate);
  // Handlebars' typings declare `VM` without `invokePartial` (its runtime sets it: lib/handlebars/runtime.js).
  const holder = env as unknown as { VM: { invokePartial: Block } };
  const vm = holder.VM;
  const invoke = countedBlock(vm.invokePartial);
  holder.VM = {
    ...vm,
    invokePartial(this: unknown, ...a: unknown[]) {
      const name = (a[2] as { name?: unknown } | undefined)?.name;
      if (typeof name === 'string') hbsRender().lastLoc = { partial: name };
      return invoke.apply(this, a);
    },
  };
}

/** One render under the budgets: the text outside any block is counted at the end. */
function budgeted(render: () => string): string {
  // a render inside a helper: its text is the outer block's
  if ((runInForce()?.hbs.written.length ?? 0) > 0) return render();
  return metered(() => {
    const hbs = hbsRender();
    const { written } = hbs;
    hbs.lastLoc = undefined;
    written.push(0);
    try {
      const out = render();
      spendOutput(Math.max(0, out.length - (written[0] ?? 0)));
      return out;
    } finally {
      written.length = 0;
    }
  });
}

/**
 * The message of a budget error with the line of the last helper or block (for a partial, the first line of
 * `source` that calls it), as Handlebars places its own errors (` - L:C`, column from 0).
 */
function budgetMessage(e: { message: string }, source: string, at0: HbsRender['lastLoc']): string {
  let at = at0;
  if (at && 'partial' in at) {
    const i = source.search(new RegExp(`\\{\\{~?#?>\\s*${at.partial.replace(/[^\w-]/g, '\\$&')}(?![\\w-])`));
    const before = source.slice(0, Math.max(0, i));
    at = i < 0 ? undefined : { line: before.split('\n').length, column: i - before.lastIndexOf('\n') - 1 };
  }
  return `${e.message} - ${at ? `${at.line}:${at.column}` : '1:0'}`;
}

/** V8's `RangeError: Maximum call stack size exceeded` (a render recursing without end). */
function isStackOverflow(e: unknown): boolean {
  return e instanceof RangeError && /call stack/i.test(e.message);
}

/** A driver's template engine (see `createTemplateEngine`). */
export interface TemplateEngine {
  /**
   * Renders `source` (cached under `name`, e.g. `istio/sidecar`) with `data` and returns the text (YAML for
   * mesh templates). Compilation is lazy, so syntax errors surface here too.
   * @throws InjectError (code TEMPLATE) naming the template when compiling or rendering fails.
   */
  render(name: string, source: string, data: unknown): string;
  /**
   * The same render for a sidecar plan (`./plans.ts`): `data` holds placeholders, and every helper runs under
   * its plan rule (`./plan-helpers.ts`).
   * @throws NoPlan when the template uses a placeholder other than as text; any other error as it comes.
   */
  renderPlanned(name: string, source: string, data: unknown): string;
}

/**
 * Creates an engine with the shared helpers plus `helpers` (a driver's own functions, which may not shadow a
 * shared one). `precompiled` holds the driver's built-in templates compiled at build time (same options) by
 * name with their source; a template whose source matches is not compiled at run time.
 */
export function createTemplateEngine(
  helpers: Readonly<Record<string, Helper>> = {},
  precompiled: Readonly<Record<string, { source: string; spec: Parameters<typeof Handlebars.template>[0] }>> = {},
  planRules: Readonly<Record<string, PlanRule>> = {},
): TemplateEngine {
  const all = { ...helpers, ...TEMPLATE_FUNCTIONS };
  const env = Handlebars.create();
  for (const [name, fn] of Object.entries(all)) env.registerHelper(name, fn as Handlebars.HelperDelegate);
  const planEnv = Handlebars.create();
  const rules = { ...planRules, ...SHARED_PLAN_RULES };
  const lookup = planEnv.helpers.lookup as Helper;
  for (const [name, fn] of Object.entries({ ...all, lookup }))
    planEnv.registerHelper(name, planned(name, fn, rules[name]) as Handlebars.HelperDelegate);
  instrument(env);
  instrument(planEnv);
  const compiler = (e: typeof Handlebars) => {
    const cache = new Map<string, { source: string; render: Handlebars.TemplateDelegate }>();
    return (name: string, source: string): Handlebars.TemplateDelegate => {
      const hit = cache.get(name);
      if (hit && hit.source === source) return hit.render;
      const pre = Object.hasOwn(precompiled, name) ? precompiled[name] : undefined;
      const render =
        pre && pre.source === source
          ? (templateOf(pre.spec as never, e) as Handlebars.TemplateDelegate)
          : e.compile(source, { strict: true, noEscape: true });
      cache.set(name, { source, render });
      return render;
    };
  };
  const compiled = compiler(env);
  const compiledPlanned = compiler(planEnv);
  const engine: TemplateEngine = {
    renderPlanned(name, source, data) {
      const render = compiledPlanned(name, source);
      return budgeted(() => render(data));
    },
    render(name, source, data) {
      // Outside a run the render runs in a run of its own, which the error message below still reads.
      const run = runInForce();
      if (!run) return withRenderRun(createRenderRun(), () => engine.render(name, source, data));
      try {
        const render = compiled(name, source);
        return budgeted(() => render(data));
      } catch (err) {
        const at = run.hbs.lastLoc;
        const reason =
          err instanceof BudgetExceeded
            ? budgetMessage(err, source, at)
            : isStackOverflow(err)
              ? budgetMessage(
                  { message: 'call stack exhausted (a partial or helper calling itself without end?)' },
                  source,
                  at,
                )
              : err instanceof Error
                ? err.message
                : String(err);
        throw new InjectError(`template "${name}" failed: ${reason}`, { code: 'TEMPLATE' });
      }
    },
  };
  return engine;
}

const shared = createTemplateEngine();

/** Renders with the shared helpers only (no driver helpers, no precompiled templates); see `TemplateEngine.render`. */
export function renderTemplate(name: string, source: string, data: unknown): string {
  return shared.render(name, source, data);
}

/** `renderTemplate` for a sidecar plan; see `TemplateEngine.renderPlanned`. */
export function renderTemplatePlanned(name: string, source: string, data: unknown): string {
  return shared.renderPlanned(name, source, data);
}
