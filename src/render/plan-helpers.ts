/**
 * How template helpers treat placeholders during a planned render (`./plans.ts`). Each helper has a rule:
 * - `copy`: the helper only copies, joins, quotes or selects text (by emptiness, which a slot-safe value and
 *   its token share): it gets token text in place of placeholders and its result is mapped back to plan text;
 * - `inspect`: the helper only walks containers (`index`, `isset`, `len`): it gets the placeholder data
 *   itself, and a placeholder it looks into throws `NoPlan` by itself;
 * - a function: the helper's own plan semantics (`trunc`, `trimAll`, `annotation`, and drivers' helpers such
 *   as Istio's `otelResourceAttributes`);
 * - no rule: a placeholder or a container holding one among the arguments throws `NoPlan` naming them, so the
 *   paths join the key and the next render has their real values.
 */
import { args, isHelperOptions, type Helper } from './template-functions.ts';
import {
  asTokens,
  assumeDiffer,
  deepTokens,
  fromTokens,
  holdsPlan,
  isStringToken,
  noPlanFor,
  planText,
  recordMaxLength,
  taintedPath,
} from './plan-values.ts';

/** A helper's plan semantics: see the module comment. `real` is the helper itself; `a` its arguments without options. */
export type PlanRule = 'copy' | 'inspect' | ((a: unknown[], real: (...a: unknown[]) => unknown) => unknown);

/** `trunc n s` keeps a placeholder whole and records that the plan needs `len(s) ≤ n` (negative n: from the end, no plan). */
function truncRule(a: unknown[], real: (...a: unknown[]) => unknown): unknown {
  const [n, s] = a;
  if (!planText(s)) return real(...a);
  if (typeof n !== 'number' || n < 0 || planText(n)) throw noPlanFor([s], 'truncates from the end');
  recordMaxLength(s as object, n);
  return s;
}

/** `trimAll cut s`: a slot-safe value starts and ends alphanumeric, so a cut set without letters or digits leaves it whole. */
function trimAllRule(a: unknown[], real: (...a: unknown[]) => unknown): unknown {
  const [cut, s] = a;
  const text = planText(s);
  if (!text) return real(...a);
  if (typeof cut !== 'string' || /[A-Za-z0-9]/.test(cut) || !isStringToken(text.text))
    throw noPlanFor([s, cut], 'trims');
  return s;
}

/** `annotation meta key default`: the annotation's value as it is (a placeholder stays one), else the default's text. */
function annotationRule(a: unknown[], real: (...a: unknown[]) => unknown): unknown {
  const [meta, key, def] = a;
  if (planText(key) || planText(def) || taintedPath(def)) throw noPlanFor([key, def], 'looks up an annotation by');
  const annotations =
    typeof meta === 'object' && meta !== null && !planText(meta)
      ? (meta as Record<string, unknown>).annotations
      : undefined;
  const value =
    typeof annotations === 'object' &&
    annotations !== null &&
    typeof key === 'string' &&
    Object.hasOwn(annotations, key)
      ? (annotations as Record<string, unknown>)[key]
      : undefined;
  return planText(value) ? value : real(...a);
}

/**
 * `indent n s` / `nindent n s` / `indentBlock n s`: `s` is copied (its lines padded), `n` is a count the helper
 * computes with, so a placeholder there (a digit string: `"4"`) stops the plan and joins the key.
 */
function indentRule(a: unknown[], real: (...a: unknown[]) => unknown): unknown {
  const [n, s] = a;
  if (holdsPlan(n)) throw noPlanFor([n], 'indents by');
  return fromTokens(real(n, asTokens(s)));
}

/**
 * `eq a b` / `ne a b` with one placeholder and one literal text: the plan assumes they differ, and records it
 * (a workload whose value equals the literal is rendered in full). `differ` is the helper's answer when they differ.
 */
export function comparisonRule(differ: boolean): PlanRule {
  return (a) => {
    if (a.length !== 2) throw noPlanFor(a, 'compares');
    assumeDiffer(a[0], a[1]);
    return differ;
  };
}

/** A helper that writes data out as text (`toJSON`, `toYaml`): it gets the data with tokens, its text is mapped back. */
export const writesData: PlanRule = (a, real) => fromTokens(real(...a.map(deepTokens)));

/** Plan rules of the shared helpers (`./template-functions.ts`). */
export const SHARED_PLAN_RULES: Readonly<Record<string, PlanRule>> = {
  quote: 'copy',
  join: 'copy',
  printf: 'copy',
  str: 'copy',
  json: writesData,
  toJSON: writesData,
  structToJSON: writesData,
  toYaml: writesData,
  eq: comparisonRule(false),
  ne: comparisonRule(true),
  default: 'copy',
  coalesce: 'copy',
  valueOrDefault: 'copy',
  or: 'copy',
  and: 'copy',
  not: 'copy',
  truthy: 'copy',
  indent: indentRule,
  nindent: indentRule,
  indentBlock: indentRule,
  index: 'inspect',
  isset: 'inspect',
  len: 'inspect',
  entries: 'inspect',
  trunc: truncRule,
  trimAll: trimAllRule,
  annotation: annotationRule,
  // Handlebars' own: `lookup obj field` would use a placeholder field's token as the key.
  lookup: (a, real) => {
    if (planText(a[1])) throw noPlanFor([a[1]], 'looks up a field named by');
    return real(...a);
  },
};

/**
 * `helper` as a planned render calls it, under `rule` (see the module comment). Handlebars passes its options
 * object last; its hash values are arguments too.
 */
export function planned(name: string, helper: Helper, rule: PlanRule | undefined): Helper {
  return (...raw: unknown[]) => {
    const options = isHelperOptions(raw[raw.length - 1])
      ? (raw[raw.length - 1] as { hash?: Record<string, unknown> })
      : undefined;
    const a = args(raw);
    const hash = options?.hash ? Object.values(options.hash) : [];
    const call = (...x: unknown[]): unknown => helper(...x, ...(options ? [options] : []));
    if (!a.some(holdsPlan) && !hash.some(holdsPlan)) return call(...a);
    if (hash.some(holdsPlan) || rule === undefined) throw noPlanFor([...a, ...hash], `passes to "${name}"`);
    if (rule === 'copy') return fromTokens(call(...a.map(asTokens)));
    if (rule === 'inspect') {
      if (a.some((x) => planText(x) !== undefined)) throw noPlanFor(a, `passes a text to "${name}", which reads`);
      return call(...a);
    }
    return rule(a, call);
  };
}
