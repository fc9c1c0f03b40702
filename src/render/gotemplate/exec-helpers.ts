/**
 * Helpers of the Go template compiler (compile.ts): Go's `idealConstant` and `validateType`, the budget charges
 * around a function call, constant folding, `range` iteration and printing of an action's value.
 */
import { type ArgNode, type BranchNode, type Node, type NumberNode, type Tree, nodeString } from './ast.ts';
import { printable } from './builtins.ts';
import type { State, Eval } from './exec-state.ts';
import { activeHooks } from './hooks.ts';
import { sprint } from './fmt.ts';
import { BudgetExceeded, CHARS_PER_STEP, spendBuilt, spendSteps } from '../budget.ts';
import {
  BOOL,
  FLOAT64,
  type GoType,
  INT,
  REFLECT_VALUE,
  STRING,
  Value,
  assignable,
  indirect,
  sortedKeys,
  typed,
  zero,
} from './value.ts';

/** A string in double quotes, as Go's `%q` writes a template name in an error. */
export function goQuote(s: string): string {
  return JSON.stringify(s);
}

/** Go `idealConstant`: a number literal as int, float (or an error). */
export function idealConstant(s: State, tree: Tree, n: NumberNode): Value {
  if (n.isFloat && !/^[+-]?0[xX]/.test(n.text) && !n.text.startsWith("'") && /[.eEpP]/.test(n.text))
    return new Value(FLOAT64, n.float);
  if (n.isInt) return new Value(INT, n.int);
  if (n.isUint) s.fail(tree, n, `${n.text} overflows int`);
  return new Value(FLOAT64, n.float);
}

/** Whether a Go type has a nil value (pointers, maps, slices, interfaces, functions). */
export function canBeNil(t: GoType): boolean {
  const k = t.kind;
  return k === 'ptr' || k === 'map' || k === 'slice' || k === 'interface' || k === 'func';
}

/** Go `validateType`: checks (and where Go does, converts) a value for a parameter of type `t`. */
export function validateType(s: State, tree: Tree, n: Node, value: Value, t: GoType): Value {
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

/**
 * Charges a function call for what it reads, before it runs (every function, builtin, sprig or a driver's, by
 * construction): a step per `CHARS_PER_STEP` characters of each text argument and a step per element of each
 * list argument, so a call that walks a large argument costs what it does, in a loop too. Deep walks (serialisers,
 * comparisons) charge each node themselves (`toJSONValue`, `format`).
 * @throws BudgetExceeded
 */
export function spendArgs(argv: readonly Value[]): void {
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
export function spendResult(name: string, out: Value, argv: readonly Value[]): void {
  const v = out.v;
  if (typeof v === 'string') spendBuilt(v.length, name);
  else if (Array.isArray(v) && v.length > 0 && !argv.some((a) => a.v === v)) spendSteps(v.length);
}

/**
 * The value of a command that is a constant or dot (the second half of Go's `evalCommand`, text/template
 * exec.go): a bool, a number (`idealConstant`), a string, or dot. `nil` and any other node fail when
 * evaluated (`nil is not a command`, `can't evaluate command ...`).
 */
export function constantCommand(tree: Tree, first: ArgNode): Eval {
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
export function rangeOver(
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
      for (const k of keys) if (!one(new Value(STRING, k), typed(elem, o[k]))) break; // own key: sortedKeys(o)
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

/** An `Eval` that always returns `v` (a folded constant). */
export function constantOf(v: Value): Eval {
  return () => v;
}

/** Go `printValue`: how `{{ pipeline }}` writes a value. */
export function printValue(s: State, tree: Tree, n: Node, v0: Value): void {
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
