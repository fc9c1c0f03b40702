/**
 * The state of one Go template execution (Go's `state` in text/template/exec.go): output, variables, call depth,
 * and the failure that names the template and position; the types compiled templates are made of.
 */
import { type Node, type Tree, nodeString } from './ast.ts';
import { BudgetExceeded, spendOutput, spendSteps } from '../budget.ts';
import { type GoFunc, Value } from './value.ts';

/** An execution failure; `message` is Go's text naming the template and position. */
export class TemplateExecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TemplateExecError';
  }
}

/** Limits of one execution. */
export interface ExecLimits {
  /** Maximum actions, loop iterations and template calls (default 5 000 000). */
  maxSteps: number;
  /** Maximum nesting of `{{template}}` calls (Go allows 100 000; default 1 000 here). */
  maxDepth: number;
}

/** The limits `execute` uses when given none. */
export const DEFAULT_LIMITS: ExecLimits = { maxSteps: 5_000_000, maxDepth: 1000 };

/** The message of an execution that overflowed the JavaScript call stack. */
export const STACK_EXHAUSTED = 'execution stopped: call stack exhausted (recursion without end?)';
/** No value at all (a pipeline's first stage has no previous value); distinct from Go's invalid `NO_VALUE`. */
export const MISSING = new Value({ kind: 'invalid', name: 'missing' }, undefined);
/** Thrown by `{{break}}` and caught by the innermost `range`. */
export const BREAK = Symbol('break');
/** Thrown by `{{continue}}` and caught by the innermost `range`. */
export const CONTINUE = Symbol('continue');

/** A template variable in scope (`$` or `$name`) and its value. */
export interface Var {
  name: string;
  value: Value;
}

/** Per-execution state (Go's `state`). */
export class State {
  out = '';
  vars: Var[] = [];
  steps = 0;
  depth = 0;
  constructor(
    readonly set: CompiledSet,
    public tmpl: string,
    readonly limits: ExecLimits,
  ) {}

  step(tree: Tree, n: Node): void {
    if (++this.steps > this.limits.maxSteps) {
      this.fail(tree, n, `execution stopped after ${this.limits.maxSteps} steps (a loop or recursion without end?)`);
    }
    try {
      spendSteps(1);
    } catch (e) {
      this.budgetFail(tree, n, e);
    }
  }

  /** Appends `text` to the output, counted against the output budget. */
  write(tree: Tree, n: Node, text: string): void {
    // Measured on the output: `text` may be a plan placeholder (./plan-values.ts), whose properties are not read.
    const before = this.out.length;
    this.out += text;
    try {
      spendOutput(this.out.length - before);
    } catch (e) {
      this.budgetFail(tree, n, e);
    }
  }

  /** A template budget ran out (`../budget.ts`): Go's error at `n`; anything else propagates. */
  budgetFail(tree: Tree, n: Node, e: unknown): never {
    if (e instanceof BudgetExceeded) this.fail(tree, n, `execution stopped: ${e.message}`);
    throw e;
  }

  /** Go `state.errorf`: `template: LOC: executing "NAME" at <CTX>: MSG`. */
  fail(tree: Tree, n: Node | undefined, msg: string): never {
    if (!n) throw new TemplateExecError(`template: ${this.tmpl}: ${msg}`);
    const before = tree.text.slice(0, n.pos);
    const nl = before.lastIndexOf('\n');
    const col = nl < 0 ? Buffer.byteLength(before) : Buffer.byteLength(before.slice(nl + 1));
    const line = 1 + (before.match(/\n/g)?.length ?? 0);
    let ctx = nodeString(n);
    if ([...ctx].length > 20) ctx = `${[...ctx].slice(0, 20).join('')}...`;
    throw new TemplateExecError(
      `template: ${tree.parseName}:${line}:${col}: executing "${this.tmpl}" at <${ctx}>: ${msg}`,
    );
  }

  varValue(tree: Tree, n: Node, name: string): Value {
    for (let i = this.vars.length - 1; i >= 0; i--)
      if ((this.vars[i] as Var).name === name) return (this.vars[i] as Var).value;
    this.fail(tree, n, `undefined variable: ${name}`);
  }

  setVar(tree: Tree, n: Node, name: string, value: Value): void {
    for (let i = this.vars.length - 1; i >= 0; i--) {
      if ((this.vars[i] as Var).name === name) {
        (this.vars[i] as Var).value = value;
        return;
      }
    }
    this.fail(tree, n, `undefined variable: ${name}`);
  }
}

/** A compiled node that writes output (an action, text, or control structure). */
export type Exec = (s: State, dot: Value) => void;
/** A compiled expression: its value with dot bound. */
export type Eval = (s: State, dot: Value) => Value;
/** Evaluates a command; `final` is the previous pipeline stage's value (MISSING at the first stage). */
export type CmdEval = (s: State, dot: Value, final: Value) => Value;

/** The function table templates are parsed and executed with (builtins plus the registered ones). */
export type FuncMap = ReadonlyMap<string, GoFunc>;

/** A set of compiled templates (one Go `*template.Template` and its associated templates). */
export interface CompiledSet {
  readonly bodies: Map<string, Exec>;
  readonly trees: Map<string, Tree>;
}
