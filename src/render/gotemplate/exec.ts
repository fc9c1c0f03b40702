/**
 * Compiles parsed Go templates into closure trees and executes them with the semantics of Go's
 * text/template/exec.go: pipelines, variables, field/map/method access, function calls with Go's
 * argument conversion, `if`/`with`/`range` (with `else`, `break`, `continue`), `template`/`block`,
 * and Go's execution error messages (`template: t:3:5: executing "t" at <.X.Y>: ...`).
 * Execution is bounded: a call-depth limit, and the template budgets of `../budget.ts` (steps: actions, loop
 * iterations, template and function calls; output: the characters written, and the size of what a function
 * returns), each reported as an execution error at the template's line.
 * The compiler is compile.ts (its helpers exec-helpers.ts); the execution state and limits are exec-state.ts.
 */
import type { Tree } from './ast.ts';
import { Compiler } from './compile.ts';
import { goQuote } from './exec-helpers.ts';
import {
  TemplateExecError,
  type ExecLimits,
  DEFAULT_LIMITS,
  STACK_EXHAUSTED,
  State,
  type FuncMap,
  type CompiledSet,
} from './exec-state.ts';
import { metered } from '../budget.ts';
import type { Value } from './value.ts';

export { DEFAULT_LIMITS, TemplateExecError, type CompiledSet, type ExecLimits, type FuncMap } from './exec-state.ts';

/** Compiles every tree of a parsed set. */
export function compileSet(trees: Map<string, Tree>, funcs: FuncMap): CompiledSet {
  const set: CompiledSet = { bodies: new Map(), trees };
  for (const [name, tree] of trees) set.bodies.set(name, new Compiler(tree, funcs).list(tree.root));
  return set;
}

/**
 * Executes template `name` of `set` with `data` as dot (the hooks made active by `withHooks`, `./hooks.ts`,
 * see its calls).
 * @throws TemplateExecError with Go's message (also for exceeded limits, naming the template).
 */
export function execute(set: CompiledSet, name: string, data: Value, limits: ExecLimits = DEFAULT_LIMITS): string {
  const body = set.bodies.get(name);
  const s = new State(set, name, limits);
  if (!body)
    return s.fail(
      { name, parseName: name, text: '', root: { type: 'list', pos: 0, nodes: [] } },
      undefined,
      `no such template ${goQuote(name)}`,
    );
  s.vars.push({ name: '$', value: data });
  try {
    metered(() => body(s, data));
  } catch (e) {
    if (e instanceof TemplateExecError) throw e;
    if (e instanceof RangeError && /call stack/i.test(e.message)) {
      throw new TemplateExecError(`template: ${name}: ${STACK_EXHAUSTED}`);
    }
    throw e;
  }
  return s.out;
}
