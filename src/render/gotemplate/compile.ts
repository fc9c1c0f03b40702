/**
 * The Go template compiler: turns a parsed tree into closures over the execution state (exec-state.ts), with
 * the semantics of Go's text/template/exec.go (pipelines, variables, field/map/method access, function calls,
 * `if`/`with`/`range`, `template`/`block`).
 */
import {
  type ArgNode,
  type BranchNode,
  type CommandNode,
  type ListNode,
  type Node,
  type PipeNode,
  type TemplateNode,
  type Tree,
  nodeString,
} from './ast.ts';
import { BUILTINS } from './builtins.ts';
import {
  goQuote,
  idealConstant,
  canBeNil,
  validateType,
  spendArgs,
  spendResult,
  constantCommand,
  rangeOver,
  constantOf,
  printValue,
} from './exec-helpers.ts';
import {
  TemplateExecError,
  STACK_EXHAUSTED,
  MISSING,
  BREAK,
  CONTINUE,
  type Var,
  type State,
  type Exec,
  type Eval,
  type CmdEval,
  type FuncMap,
} from './exec-state.ts';
import { activeHooks } from './hooks.ts';
import { BudgetExceeded } from '../budget.ts';
import {
  ANY,
  BOOL,
  type GoType,
  NO_VALUE,
  REFLECT_VALUE,
  STRING,
  Value,
  fieldOf,
  indirect,
  indirectInterface,
  truth,
  typed,
  zero,
} from './value.ts';

/** Compiles the nodes of one tree against a function table (Go's `state.walk` and `evalPipeline`, as closures). */
export class Compiler {
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
        if (o === null || !Object.hasOwn(o, name)) return NO_VALUE;
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
