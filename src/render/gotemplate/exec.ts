/**
 * Compiles parsed Go templates into closure trees and executes them with the semantics of Go's
 * text/template/exec.go: pipelines, variables, field/map/method access, function calls with Go's
 * argument conversion, `if`/`with`/`range` (with `else`, `break`, `continue`), `template`/`block`,
 * and Go's execution error messages (`template: t:3:5: executing "t" at <.X.Y>: ...`).
 * Execution is bounded: a call-depth limit, and the template budgets of `../budget.ts` (steps: actions, loop
 * iterations, template and function calls; output: the characters written, and the size of what a function
 * returns), each reported as an execution error at the template's line.
 */
import type {
  ArgNode,
  BranchNode,
  CommandNode,
  ListNode,
  Node,
  NumberNode,
  PipeNode,
  TemplateNode,
  Tree,
} from './ast.ts';
import { nodeString } from './ast.ts';
import { BUILTINS, printable } from './builtins.ts';
import { activeHooks } from './hooks.ts';
import { sprint } from './fmt.ts';
import { BudgetExceeded, CHARS_PER_STEP, metered, spendBuilt, spendOutput, spendSteps } from '../budget.ts';
import {
  ANY,
  BOOL,
  FLOAT64,
  type GoFunc,
  type GoType,
  INT,
  NO_VALUE,
  REFLECT_VALUE,
  STRING,
  Value,
  assignable,
  fieldOf,
  indirect,
  indirectInterface,
  sortedKeys,
  truth,
  typed,
  zero,
} from './value.ts';

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

export const DEFAULT_LIMITS: ExecLimits = { maxSteps: 5_000_000, maxDepth: 1000 };

const STACK_EXHAUSTED = 'execution stopped: call stack exhausted (recursion without end?)';
const MISSING = new Value({ kind: 'invalid', name: 'missing' }, undefined);
const BREAK = Symbol('break');
const CONTINUE = Symbol('continue');

interface Var {
  name: string;
  value: Value;
}

/** Per-execution state (Go's `state`). */
class State {
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

type Exec = (s: State, dot: Value) => void;
type Eval = (s: State, dot: Value) => Value;
/** Evaluates a command; `final` is the previous pipeline stage's value (MISSING at the first stage). */
type CmdEval = (s: State, dot: Value, final: Value) => Value;

/** The function table templates are parsed and executed with (builtins plus the registered ones). */
export type FuncMap = ReadonlyMap<string, GoFunc>;

/** A set of compiled templates (one Go `*template.Template` and its associated templates). */
export interface CompiledSet {
  readonly bodies: Map<string, Exec>;
  readonly trees: Map<string, Tree>;
}

function goQuote(s: string): string {
  return JSON.stringify(s);
}

/** Go `idealConstant`: a number literal as int, float (or an error). */
function idealConstant(s: State, tree: Tree, n: NumberNode): Value {
  if (n.isFloat && !/^[+-]?0[xX]/.test(n.text) && !n.text.startsWith("'") && /[.eEpP]/.test(n.text))
    return new Value(FLOAT64, n.float);
  if (n.isInt) return new Value(INT, n.int);
  if (n.isUint) s.fail(tree, n, `${n.text} overflows int`);
  return new Value(FLOAT64, n.float);
}

function canBeNil(t: GoType): boolean {
  const k = t.kind;
  return k === 'ptr' || k === 'map' || k === 'slice' || k === 'interface' || k === 'func';
}

/** Go `validateType`: checks (and where Go does, converts) a value for a parameter of type `t`. */
function validateType(s: State, tree: Tree, n: Node, value: Value, t: GoType): Value {
  if (t === REFLECT_VALUE) return value;
  if (value.t.kind === 'invalid') {
    if (canBeNil(t)) return zero(t);
    s.fail(tree, n, `invalid value; expected ${t.name}`);
  }
  if (assignable(value.t, t)) return value;
  if (value.t.kind === 'ptr' && value.t.elem && assignable(value.t.elem, t)) {
    if (value.v === null) s.fail(tree, n, `dereference of nil pointer of type ${t.name}`);
    return new Value(value.t.elem, value.v);
  }
  if (t.kind === 'ptr' && t.elem && assignable(value.t, t.elem)) return new Value(t, value.v);
  s.fail(tree, n, `wrong type for value; expected ${t.name}; got ${value.t.name}`);
}

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

class Compiler {
  constructor(
    private readonly tree: Tree,
    private readonly funcs: FuncMap,
  ) {}

  list(l: ListNode): Exec {
    const items = l.nodes.map((n) => this.node(n));
    if (items.length === 1) return items[0] as Exec;
    return (s, dot) => {
      for (let i = 0; i < items.length; i++) (items[i] as Exec)(s, dot);
    };
  }

  node(n: Node): Exec {
    const tree = this.tree;
    switch (n.type) {
      case 'text': {
        const text = n.text;
        return (s) => s.write(tree, n, text);
      }
      case 'action': {
        const pipe = this.pipe(n.pipe);
        if (n.pipe.decl.length > 0) return (s, dot) => void pipe(s, dot);
        return (s, dot) => {
          s.step(tree, n);
          printValue(s, tree, n, pipe(s, dot));
        };
      }
      case 'if':
      case 'with':
        return this.ifOrWith(n);
      case 'range':
        return this.range(n);
      case 'template':
        return this.template(n);
      case 'break':
        return () => {
          throw BREAK;
        };
      case 'continue':
        return () => {
          throw CONTINUE;
        };
      case 'list':
        return this.list(n);
      case 'comment':
        return () => {};
      default:
        return (s) => s.fail(tree, n, `unknown node: ${nodeString(n)}`);
    }
  }

  ifOrWith(n: BranchNode): Exec {
    const pipe = this.pipe(n.pipe);
    const list = this.list(n.list);
    const elseList = n.elseList ? this.list(n.elseList) : undefined;
    const isWith = n.type === 'with';
    return (s, dot) => {
      const mark = s.vars.length;
      const val = pipe(s, dot);
      if (truth(indirectInterface(val))) list(s, isWith ? val : dot);
      else if (elseList) elseList(s, dot);
      s.vars.length = mark;
    };
  }

  range(n: BranchNode): Exec {
    const tree = this.tree;
    const pipe = this.pipe(n.pipe);
    const body = this.list(n.list);
    const elseList = n.elseList ? this.list(n.elseList) : undefined;
    const decl = n.pipe.decl.map((d) => d.ident[0] as string);
    const isAssign = n.pipe.isAssign;
    return (s, dot) => {
      const mark0 = s.vars.length;
      const val = indirect(pipe(s, dot)).v;
      const mark = s.vars.length;
      const one = (index: Value, elem: Value): boolean => {
        s.step(tree, n);
        if (decl.length > 0) {
          if (isAssign) s.setVar(tree, n, decl[0] as string, decl.length > 1 ? index : elem);
          else (s.vars[s.vars.length - 1] as Var).value = elem;
        }
        if (decl.length > 1) {
          if (isAssign) s.setVar(tree, n, decl[1] as string, elem);
          else (s.vars[s.vars.length - 2] as Var).value = index;
        }
        try {
          body(s, elem);
        } catch (e) {
          if (e === BREAK) return false;
          if (e !== CONTINUE) throw e;
        } finally {
          s.vars.length = mark;
        }
        return true;
      };
      const ran = rangeOver(s, tree, n, val, decl.length, one);
      if (!ran && elseList) elseList(s, dot);
      s.vars.length = mark0;
    };
  }

  template(n: TemplateNode): Exec {
    const tree = this.tree;
    const pipe = n.pipe ? this.pipe(n.pipe) : undefined;
    const name = n.name;
    return (s, dot) => {
      const body = s.set.bodies.get(name);
      if (!body) return s.fail(tree, n, `no such template ${goQuote(name)}`);
      if (s.depth >= s.limits.maxDepth) s.fail(tree, n, `exceeded maximum template depth (${s.limits.maxDepth})`);
      s.step(tree, n);
      const newDot = pipe ? pipe(s, dot) : NO_VALUE;
      const saved = { vars: s.vars, tmpl: s.tmpl };
      s.vars = [{ name: '$', value: newDot }];
      s.tmpl = name;
      s.depth++;
      try {
        body(s, newDot);
      } catch (e) {
        // The call stack ran out: reported at the innermost `template` call that can still report (its line).
        if (e instanceof RangeError && /call stack/i.test(e.message)) s.fail(tree, n, STACK_EXHAUSTED);
        throw e;
      } finally {
        s.depth--;
        s.vars = saved.vars;
        s.tmpl = saved.tmpl;
      }
    };
  }

  pipe(p: PipeNode): Eval {
    const tree = this.tree;
    const cmds = p.cmds.map((c) => this.command(c));
    const decl = p.decl.map((d) => d.ident[0] as string);
    const isAssign = p.isAssign;
    if (cmds.length === 1 && decl.length === 0) {
      const only = cmds[0] as CmdEval;
      return (s, dot) => {
        const v = only(s, dot, MISSING);
        return v.t.kind === 'interface' && v.v === null && v.t === ANY ? NO_VALUE : v;
      };
    }
    return (s, dot) => {
      let value = MISSING;
      for (let i = 0; i < cmds.length; i++) {
        value = (cmds[i] as CmdEval)(s, dot, value);
        if (value.t === ANY && value.v === null) value = NO_VALUE;
      }
      for (const name of decl) {
        if (isAssign) s.setVar(tree, p, name, value);
        else s.vars.push({ name, value });
      }
      return value;
    };
  }

  command(c: CommandNode): CmdEval {
    const tree = this.tree;
    const first = c.args[0] as ArgNode;
    const rest = c.args.slice(1);
    switch (first.type) {
      case 'field': {
        const chain = this.fieldChain(first, first.ident, rest);
        return (s, dot, final) => chain(s, dot, dot, final);
      }
      case 'chain': {
        if (first.node.type === 'nil')
          return (s) => s.fail(tree, first, `indirection through explicit nil in ${nodeString(first)}`);
        const recv = this.arg(first.node, ANY);
        const chain = this.fieldChain(first, first.field, rest);
        return (s, dot, final) => chain(s, dot, recv(s, dot), final);
      }
      case 'identifier':
        return this.call(first, first.ident, rest);
      case 'pipe': {
        const pipe = this.pipe(first);
        return (s, dot, final) => {
          this.notAFunction(s, first, rest.length, final);
          return pipe(s, dot);
        };
      }
      case 'variable': {
        const name = first.ident[0] as string;
        if (first.ident.length === 1) {
          return (s, _dot, final) => {
            this.notAFunction(s, first, rest.length, final);
            return s.varValue(tree, first, name);
          };
        }
        const chain = this.fieldChain(first, first.ident.slice(1), rest);
        return (s, dot, final) => chain(s, dot, s.varValue(tree, first, name), final);
      }
      default:
        break;
    }
    const constant = constantCommand(tree, first);
    return (s, dot, final) => {
      this.notAFunction(s, first, rest.length, final);
      return constant(s, dot);
    };
  }

  notAFunction(s: State, n: Node, extraArgs: number, final: Value): void {
    if (extraArgs > 0 || final !== MISSING)
      s.fail(this.tree, n, `can't give argument to non-function ${nodeString(n)}`);
  }

  /** `.A.B.C` on `receiver`: all but the last are plain accesses; the last gets the arguments. */
  fieldChain(
    n: Node,
    ident: string[],
    args: ArgNode[],
  ): (s: State, dot: Value, receiver: Value, final: Value) => Value {
    const last = ident.length - 1;
    const argEvals = args.map((a) => this.arg(a, ANY));
    const argNodes = args;
    return (s, dot, receiver, final) => {
      let r = receiver;
      for (let i = 0; i < last; i++) r = this.field(s, n, dot, ident[i] as string, [], [], MISSING, r);
      return this.field(s, n, dot, ident[last] as string, argEvals, argNodes, final, r);
    };
  }

  /** Go `evalField`: method, struct field or map key `name` of `receiver`. */
  field(
    s: State,
    n: Node,
    dot: Value,
    name: string,
    argEvals: Eval[],
    argNodes: ArgNode[],
    final: Value,
    receiver: Value,
  ): Value {
    const tree = this.tree;
    if (receiver.t.kind === 'invalid') return NO_VALUE;
    const typName = receiver.t.name;
    const { v: r, isNil } = indirect(receiver);
    if (r.t.kind === 'interface' && isNil) s.fail(tree, n, `nil pointer evaluating ${typName}.${name}`);
    const method = receiver.t.methods?.get(name) ?? r.t.methods?.get(name);
    if (method) {
      const want = method.params.length;
      const got = argNodes.length + (final !== MISSING ? 1 : 0);
      if (got !== want) s.fail(tree, n, `wrong number of args for ${name}: want ${want} got ${got}`);
      const args = argNodes.map((a, i) =>
        validateType(s, tree, a, (argEvals[i] as Eval)(s, dot), method.params[i] as GoType),
      );
      if (final !== MISSING) args.push(validateType(s, tree, n, final, method.params[want - 1] as GoType));
      try {
        activeHooks()?.beforeMethod(
          name,
          r.v,
          args.map((a) => a.v),
        );
        return method.call(isNil ? null : r.v, args);
      } catch (e) {
        if (e instanceof TemplateExecError || activeHooks()?.passes(e)) throw e;
        s.fail(tree, n, `error calling ${name}: ${(e as Error).message}`);
      }
    }
    const hasArgs = argNodes.length > 0 || final !== MISSING;
    switch (r.t.kind) {
      case 'struct': {
        const f = r.t.fieldIndex?.get(name);
        if (f) {
          if (hasArgs) s.fail(tree, n, `${name} has arguments but cannot be invoked as function`);
          return fieldOf(r.v, f);
        }
        if (r.t.opaque || r.t.partial)
          s.fail(
            tree,
            n,
            `can't evaluate field ${name} in type ${typName} (meshinject models only part of this Go type)`,
          );
        break;
      }
      case 'map': {
        if (hasArgs) s.fail(tree, n, `${name} is not a method but has arguments`);
        const o = r.v as Record<string, unknown> | null;
        if (o === null || !Object.prototype.hasOwnProperty.call(o, name)) return NO_VALUE;
        return typed(r.t.elem as GoType, o[name]);
      }
      case 'ptr': {
        const elem = r.t.elem as GoType;
        if (elem.kind === 'struct' && !elem.fieldIndex?.has(name)) break;
        if (isNil) s.fail(tree, n, `nil pointer evaluating ${typName}.${name}`);
        break;
      }
      default:
        break;
    }
    s.fail(tree, n, `can't evaluate field ${name} in type ${typName}`);
  }

  /** Compiles an argument evaluated for a parameter of type `t` (Go `evalArg`). */
  arg(a: ArgNode, t: GoType): Eval {
    const tree = this.tree;
    switch (a.type) {
      case 'dot':
        return (s, dot) => validateType(s, tree, a, dot, t);
      case 'nil':
        if (canBeNil(t) || t === REFLECT_VALUE) {
          const z = t === REFLECT_VALUE ? NO_VALUE : zero(t);
          return () => z;
        }
        return (s) => s.fail(tree, a, `cannot assign nil to ${t.name}`);
      case 'field': {
        const chain = this.fieldChain(a, a.ident, []);
        return (s, dot) => validateType(s, tree, a, chain(s, dot, dot, MISSING), t);
      }
      case 'variable': {
        const name = a.ident[0] as string;
        if (a.ident.length === 1) return (s) => validateType(s, tree, a, s.varValue(tree, a, name), t);
        const chain = this.fieldChain(a, a.ident.slice(1), []);
        return (s, dot) => validateType(s, tree, a, chain(s, dot, s.varValue(tree, a, name), MISSING), t);
      }
      case 'pipe': {
        const pipe = this.pipe(a);
        return (s, dot) => validateType(s, tree, a, pipe(s, dot), t);
      }
      case 'identifier': {
        const call = this.call(a, a.ident, []);
        return (s, dot) => validateType(s, tree, a, call(s, dot, MISSING), t);
      }
      case 'chain': {
        const cmd = this.command({ type: 'command', pos: a.pos, args: [a] });
        return (s, dot) => validateType(s, tree, a, cmd(s, dot, MISSING), t);
      }
      default:
        break;
    }
    const fail =
      (msg: string): Eval =>
      (s) =>
        s.fail(tree, a, msg);
    switch (t.kind) {
      case 'bool':
        return a.type === 'bool' ? constantOf(new Value(t, a.value)) : fail(`expected bool; found ${nodeString(a)}`);
      case 'float':
        return a.type === 'number' && a.isFloat
          ? constantOf(new Value(t, a.float))
          : fail(`expected float; found ${nodeString(a)}`);
      case 'int':
        return a.type === 'number' && a.isInt
          ? constantOf(new Value(t, a.int))
          : fail(`expected integer; found ${nodeString(a)}`);
      case 'uint':
        return a.type === 'number' && a.isUint
          ? constantOf(new Value(t, a.int))
          : fail(`expected unsigned integer; found ${nodeString(a)}`);
      case 'string':
        return a.type === 'string' ? constantOf(new Value(t, a.text)) : fail(`expected string; found ${nodeString(a)}`);
      case 'interface':
        if (t === ANY || t === REFLECT_VALUE) {
          if (a.type === 'bool') return constantOf(new Value(BOOL, a.value));
          if (a.type === 'string') return constantOf(new Value(STRING, a.text));
          if (a.type === 'number') return (s) => idealConstant(s, tree, a);
        }
        break;
      default:
        break;
    }
    return fail(`can't handle ${nodeString(a)} for arg of type ${t.name}`);
  }

  /** Go `evalFunction` + `evalCall`. */
  call(n: Node, name: string, args: ArgNode[]): CmdEval {
    const tree = this.tree;
    const f = this.funcs.get(name) ?? BUILTINS.get(name);
    if (!f) return (s) => s.fail(tree, n, `${goQuote(name)} is not a defined function`);
    const builtin = !this.funcs.has(name) && BUILTINS.has(name);
    const nParams = f.params.length;
    const numFixed = f.variadic ? nParams - 1 : nParams;
    const paramFor = (i: number): GoType => (i < numFixed ? f.params[i] : f.params[nParams - 1]) as GoType;
    const argEvals = args.map((a, i) => this.arg(a, paramFor(i)));
    if (builtin && (name === 'and' || name === 'or')) {
      const isOr = name === 'or';
      return (s, dot, final) => {
        const numIn = args.length + (final !== MISSING ? 1 : 0);
        if (numIn < 1) s.fail(tree, n, `wrong number of args for ${name}: want at least 1 got ${args.length}`);
        let v = NO_VALUE;
        for (const ev of argEvals) {
          v = ev(s, dot);
          if (truth(indirectInterface(v)) === isOr) return v;
        }
        if (final !== MISSING) v = final;
        return v;
      };
    }
    return (s, dot, final) => {
      const numIn = args.length + (final !== MISSING ? 1 : 0);
      if (f.variadic) {
        if (numIn < numFixed)
          s.fail(tree, n, `wrong number of args for ${name}: want at least ${numFixed} got ${args.length}`);
      } else if (numIn !== nParams) s.fail(tree, n, `wrong number of args for ${name}: want ${nParams} got ${numIn}`);
      const argv: Value[] = new Array(numIn);
      for (let i = 0; i < argEvals.length; i++) argv[i] = (argEvals[i] as Eval)(s, dot);
      if (final !== MISSING) argv[numIn - 1] = validateType(s, tree, n, final, paramFor(numIn - 1));
      s.step(tree, n);
      let out: Value;
      try {
        spendArgs(argv);
        const hooks = activeHooks();
        out = hooks ? hooks.call(name, f.fn, argv, f.plan) : f.fn(...argv);
        spendResult(name, out, argv);
      } catch (e) {
        if (e instanceof TemplateExecError || activeHooks()?.passes(e)) throw e;
        if (e instanceof BudgetExceeded) return s.fail(tree, n, `execution stopped: ${e.message}`);
        return s.fail(tree, n, `error calling ${name}: ${(e as Error).message}`);
      }
      return out;
    };
  }
}

/**
 * Charges a function call for what it reads, before it runs (every function, builtin, sprig or a driver's, by
 * construction): a step per `CHARS_PER_STEP` characters of each text argument and a step per element of each
 * list argument, so a call that walks a large argument costs what it does, in a loop too. Deep walks (serialisers,
 * comparisons) charge each node themselves (`toJSONValue`, `format`).
 * @throws BudgetExceeded
 */
function spendArgs(argv: readonly Value[]): void {
  let work = 0;
  for (let i = 0; i < argv.length; i++) {
    const v = (argv[i] as Value).v;
    if (typeof v === 'string') work += Math.floor(v.length / CHARS_PER_STEP);
    else if (Array.isArray(v)) work += v.length;
  }
  if (work > 0) spendSteps(work);
}

/**
 * Charges a function call for what it made: a text (refused past the output budget, a step per `CHARS_PER_STEP`
 * characters: `spendBuilt`) or a new list (a step per element; a list handed back as it came is not new).
 * @throws BudgetExceeded
 */
function spendResult(name: string, out: Value, argv: readonly Value[]): void {
  const v = out.v;
  if (typeof v === 'string') spendBuilt(v.length, name);
  else if (Array.isArray(v) && v.length > 0 && !argv.some((a) => a.v === v)) spendSteps(v.length);
}

/**
 * The value of a command that is a constant or dot (the second half of Go's `evalCommand`, text/template
 * exec.go): a bool, a number (`idealConstant`), a string, or dot. `nil` and any other node fail when
 * evaluated (`nil is not a command`, `can't evaluate command ...`).
 */
function constantCommand(tree: Tree, first: ArgNode): Eval {
  switch (first.type) {
    case 'bool': {
      const v = new Value(BOOL, first.value);
      return () => v;
    }
    case 'dot':
      return (_s, dot) => dot;
    case 'nil':
      return (s) => s.fail(tree, first, 'nil is not a command');
    case 'number':
      return (s) => idealConstant(s, tree, first);
    case 'string': {
      const v = new Value(STRING, first.text);
      return () => v;
    }
    default:
      return (s) => s.fail(tree, first, `can't evaluate command ${goQuote(nodeString(first))}`);
  }
}

/**
 * The iteration of Go's `walkRange` (text/template exec.go) over `val`: calls `one(index, elem)` for each
 * slice element, each map entry in sorted key order, or each integer below an int/uint count, until `one`
 * returns false (`break`). `declCount` is the number of range variables (an integer takes at most one).
 * Returns whether the body ran at least once (else `else` runs); a nil/invalid value iterates nothing.
 * @throws TemplateExecError for a value range cannot iterate over
 */
function rangeOver(
  s: State,
  tree: Tree,
  n: BranchNode,
  val: Value,
  declCount: number,
  one: (index: Value, elem: Value) => boolean,
): boolean {
  switch (val.t.kind) {
    case 'slice': {
      const items = val.v as unknown[] | null;
      if (!items || items.length === 0) return false;
      const elem = val.t.elem as GoType;
      for (let i = 0; i < items.length; i++) if (!one(new Value(INT, i), typed(elem, items[i]))) break;
      return true;
    }
    case 'map': {
      const o = val.v as Record<string, unknown> | null;
      if (!o) return false;
      const keys = sortedKeys(o);
      if (keys.length === 0) return false;
      const elem = val.t.elem as GoType;
      for (const k of keys) if (!one(new Value(STRING, k), typed(elem, o[k]))) break;
      return true;
    }
    case 'int':
    case 'uint': {
      if (declCount > 1) s.fail(tree, n, `can't use ${sprint([val])} to iterate over more than one variable`);
      const count = val.v as number;
      if (count <= 0) return false;
      for (let i = 0; i < count; i++) {
        const iv = new Value(val.t, i);
        if (!one(iv, iv)) break;
      }
      return true;
    }
    case 'invalid':
      return false;
    default:
      s.fail(tree, n, `range can't iterate over ${sprint([printable(val)])}`);
  }
}

function constantOf(v: Value): Eval {
  return () => v;
}

/** Go `printValue`: how `{{ pipeline }}` writes a value. */
function printValue(s: State, tree: Tree, n: Node, v0: Value): void {
  let v = v0;
  if (v.t.kind === 'ptr') {
    const r = indirect(v);
    v = r.v;
  }
  if (v.t.kind === 'invalid') {
    s.write(tree, n, '<no value>');
    return;
  }
  if (v.t.kind === 'string') {
    if (!v.t.stringer) {
      s.write(tree, n, v.v as string);
      return;
    }
  }
  if (v.t.kind === 'func') s.fail(tree, n, `can't print ${nodeString(n)} of type ${v.t.name}`);
  let text: string;
  try {
    text = sprint([v]);
  } catch (e) {
    if (activeHooks()?.passes(e)) throw e;
    if (e instanceof BudgetExceeded) s.budgetFail(tree, n, e);
    s.fail(tree, n, (e as Error).message);
  }
  s.write(tree, n, text);
}
