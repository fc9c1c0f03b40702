/**
 * Sidecar plans (`./plans.ts`) for the Go template engine: how a function call treats placeholders during a
 * planned render, given to the engine as its call hooks (`GO_PLAN_HOOKS`; the engine does not import the plans).
 * The rules mirror the Handlebars ones (`./plan-helpers.ts`) on Go values:
 * - `copy`: the function copies, quotes, joins or selects text by emptiness: it gets token text, its text result is
 *   mapped back to plan text (a number placeholder cannot be copied: Go formats numbers its own way);
 * - `writes`: the function writes data out as text (`toJSON`, `toYaml`): it gets the data with tokens;
 * - `inspect`: the function walks containers (`index`, `len`, `isset`, `annotation`) or stores values (`list`,
 *   `append`): it gets the placeholder data; a placeholder among its other arguments stops the plan;
 * - a function: `trunc`, `trimSuffix`, `trimPrefix`, `eq`, `ne` record what the plan assumed;
 * - no rule: plan data among the arguments throws `NoPlan` naming it (those paths join the key).
 */
import {
  asTokens,
  assumeDiffer,
  deepTokens,
  fromTokens,
  holdsPlan,
  NoPlan,
  noPlanFor,
  planText,
  recordMaxLength,
} from './plan-values.ts';
import type { CallHooks } from './gotemplate/hooks.ts';
import { FALSE, STRING, TRUE, Value } from './gotemplate/value.ts';

/** A Go function's plan rule; `real` is the function itself. */
export type GoPlanRule = 'copy' | 'writes' | 'inspect' | ((a: Value[], real: (...a: Value[]) => Value) => Value);

const withRep = (v: Value, rep: unknown): Value => (rep === v.v ? v : new Value(v.t, rep));

/** A string result holding tokens, as plan text (the placeholder itself when it is exactly one). */
function back(r: Value): Value {
  if (typeof r.v !== 'string') return r;
  const m = fromTokens(r.v);
  return m === r.v ? r : new Value(r.t.kind === 'string' ? r.t : STRING, m);
}

/** `v` with placeholders as token text (see `asTokens`); a slice of texts is mapped element by element. */
function tokensOf(v: Value): Value {
  if (Array.isArray(v.v) && !planText(v.v)) {
    return withRep(
      v,
      v.v.map((x) => (!planText(x) && x instanceof Value ? tokensOf(x) : asTokens(x))),
    );
  }
  return withRep(v, asTokens(v.v));
}

/** `trunc n s`: a placeholder kept whole records `len ≤ n`; Istio's canonical name is `... | trunc 63`. */
function truncRule(a: Value[]): Value {
  const [n, s] = a as [Value, Value];
  if (!planText(s.v) || typeof n.v !== 'number' || n.v < 0)
    throw noPlanFor(
      a.map((x) => x.v),
      'truncates',
    );
  recordMaxLength(s.v as object, n.v);
  return s;
}

/** `trimSuffix x s` / `trimPrefix x s`: a slot-safe value ends (starts) alphanumeric, so `x` ending (starting) otherwise never matches. */
function trimRule(end: 'last' | 'first'): GoPlanRule {
  return (a) => {
    const [x, s] = a as [Value, Value];
    const edge = typeof x.v === 'string' ? (end === 'last' ? x.v.slice(-1) : x.v.slice(0, 1)) : '';
    if (edge === '' || /[A-Za-z0-9]/.test(edge) || !planText(s.v))
      throw noPlanFor(
        a.map((v) => v.v),
        'trims',
      );
    return s;
  };
}

/** `eq a b` / `ne a b` with one placeholder and one literal text: the plan assumes they differ (see `recordNotEqual`). */
function compareRule(differ: boolean): GoPlanRule {
  return (a) => {
    const [x, y] = a;
    if (a.length !== 2 || x === undefined || y === undefined)
      throw noPlanFor(
        a.map((v) => v.v),
        'compares',
      );
    assumeDiffer(x.v, y.v);
    return differ ? TRUE : FALSE;
  };
}

/**
 * Whether every directive of a `printf` format is `%%` or a bare `%s`, `%v`, `%q` or `%d`: verbs that print a
 * string as it is (quoted for `%q`; `%!d(string=…)` for `%d`), whatever its length.
 */
function bareVerbs(format: string): boolean {
  for (let i = format.indexOf('%'); i >= 0; i = format.indexOf('%', i + 2)) {
    if (i + 1 >= format.length || !'%svqd'.includes(format.charAt(i + 1))) return false;
  }
  return true;
}

/**
 * `printf format args…` copies text (`copy`) when its format has only bare verbs (`bareVerbs`). A width, a
 * precision, a flag or an argument index formats by the text's length (`%9s` pads, `%.3s` cuts), and other verbs
 * (`%x`) by its bytes: a token would print otherwise than the value, so placeholders stop the plan and their paths
 * join the key (Go `fmt`, the format's directives).
 */
function printfRule(a: Value[], real: (...a: Value[]) => Value): Value {
  const format = a[0]?.v;
  const text = typeof format === 'string' ? format : planText(format)?.text;
  if (text === undefined || !bareVerbs(text))
    throw noPlanFor(
      a.map((x) => x.v),
      'formats by length or bytes',
    );
  return back(real(...a.map(tokensOf)));
}

/** Plan rules by function name: Go's builtins, the Sprig functions and Istio's `InjectionFuncmap` members templates use. */
export const GO_PLAN_RULES: ReadonlyMap<string, GoPlanRule> = new Map<string, GoPlanRule>([
  ...(
    ['quote', 'squote', 'default', 'coalesce', 'valueOrDefault', 'print', 'println', 'join', 'cat', 'toString'] as const
  ).map((n) => [n, 'copy'] as const),
  ...(['toJSON', 'toJson', 'toRawJson', 'toPrettyJson', 'structToJSON', 'toYaml'] as const).map(
    (n) => [n, 'writes'] as const,
  ),
  ...(['index', 'len', 'isset', 'hasKey', 'annotation', 'list', 'append'] as const).map((n) => [n, 'inspect'] as const),
  ['printf', printfRule],
  ['trunc', truncRule],
  ['trimSuffix', trimRule('last')],
  ['trimPrefix', trimRule('first')],
  ['eq', compareRule(false)],
  ['ne', compareRule(true)],
]);

/**
 * Calls Go function `name` during a planned render: directly when no argument holds plan data, else under its
 * rule (see the module comment); `own` is the function's own rule (`GoFunc.plan`), which comes first.
 * @throws NoPlan when the function has no rule for the plan data it was given
 */
export function plannedCall(name: string, fn: (...a: Value[]) => Value, argv: Value[], own?: GoPlanRule): Value {
  if (!argv.some((a) => holdsPlan(a.v))) return fn(...argv);
  const rule = own ?? GO_PLAN_RULES.get(name);
  if (rule === 'copy') return back(fn(...argv.map(tokensOf)));
  if (rule === 'writes') return back(fn(...argv.map((a) => withRep(a, deepTokens(a.v)))));
  if (rule === 'inspect') {
    const stores = name === 'list' || name === 'append';
    if (!stores && argv.some((a) => planText(a.v)))
      throw noPlanFor(
        argv.map((a) => a.v),
        `passes a text to "${name}", which reads`,
      );
    return fn(...argv);
  }
  if (rule) return rule(argv, fn);
  throw noPlanFor(
    argv.map((a) => a.v),
    `passes to "${name}"`,
  );
}

/**
 * The call hooks of a planned Go render (`withHooks(GO_PLAN_HOOKS, ...)` around building its data and executing
 * it): functions run under their plan rules (`plannedCall`), a method given plan data stops the plan, `NoPlan`
 * passes through the engine, and placeholders are strings or numbers to Go.
 */
export const GO_PLAN_HOOKS: CallHooks = {
  call: plannedCall,
  beforeMethod(name, receiver, args) {
    if (holdsPlan(receiver) || args.some((a) => holdsPlan(a)))
      throw noPlanFor([receiver, ...args], `calls method ${name} on`);
  },
  passes: (e) => e instanceof NoPlan,
  kindOf(raw) {
    const plan = planText(raw);
    return plan ? (plan.numeric ? 'float64' : 'string') : undefined;
  },
};
