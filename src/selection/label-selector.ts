import { setOwn } from '../json.ts';
import type { LabelSelector } from '../model.ts';
import type { ErrorData } from '../results/errors.ts';

/** A problem found in a selector: `path` is the field path of the offending part (e.g. `spec.namespaceSelector.matchExpressions[0].values`). */
export interface SelectorIssue {
  path: string;
  message: string;
}

type Requirement = NonNullable<LabelSelector['matchExpressions']>[number];

/**
 * Kubernetes `metav1.LabelSelector` semantics (`LabelSelectorAsSelector`, k8s.io/apimachinery
 * pkg/apis/meta/v1/helpers.go): every `matchLabels` pair AND every `matchExpressions` requirement must hold.
 * - `In`: the key is present and its value is in `values`;
 * - `NotIn`: the key is absent or its value is not in `values`;
 * - `Exists` / `DoesNotExist`: presence of the key.
 * An empty selector (`{}`) matches every label set. Callers decide what an *absent* selector means.
 * The selector is assumed valid (see `validateSelector`); an unknown operator matches nothing.
 */
export function matchesSelector(selector: LabelSelector, labels: Record<string, string>): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (!hasLabel(labels, key) || labels[key] !== value) return false; // own key: hasLabel is Object.hasOwn
  }
  for (const req of selector.matchExpressions ?? []) {
    if (!matchesRequirement(req, labels)) return false;
  }
  return true;
}

/** True when the selector has neither `matchLabels` entries nor `matchExpressions` (it matches everything). */
export function isEmptySelector(selector: LabelSelector): boolean {
  return Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0;
}

function hasLabel(labels: Record<string, string>, key: string): boolean {
  return Object.hasOwn(labels, key);
}

function matchesRequirement(req: Requirement, labels: Record<string, string>): boolean {
  const present = hasLabel(labels, req.key);
  const value = present ? labels[req.key] : undefined;
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return present;
    case 'DoesNotExist':
      return !present;
    default:
      return false;
  }
}

const NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Checks a label key (Kubernetes "qualified name", `IsQualifiedName`): an optional DNS-subdomain prefix of at
 * most 253 characters and `/`, then a name of 1-63 alphanumerics, `-`, `_`, `.`, starting and ending
 * alphanumeric. Returns an explanation, or `undefined` when valid.
 */
export function checkLabelKey(key: string): string | undefined {
  const slash = key.lastIndexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) {
    return `label key "${key}" has an invalid prefix (a lower-case DNS subdomain of at most 253 characters is expected before "/")`;
  }
  if (name.length === 0 || name.length > 63 || !NAME_PART.test(name)) {
    return `label key "${key}" is invalid (a name of 1-63 characters [A-Za-z0-9-_.], starting and ending alphanumeric, optionally prefixed by "<dns-subdomain>/", is expected)`;
  }
  return undefined;
}

/** Checks a label value (`IsValidLabelValue`): empty, or 1-63 characters like a key's name part. */
export function checkLabelValue(value: string): string | undefined {
  if (value === '' || (value.length <= 63 && NAME_PART.test(value))) return undefined;
  return `label value "${value}" is invalid (at most 63 characters [A-Za-z0-9-_.], starting and ending alphanumeric, or empty)`;
}

/**
 * Validates the shape of a selector beyond its JSON type (which the JSON Schema checks): label keys and
 * values, `In`/`NotIn` with at least one value, `Exists`/`DoesNotExist` without values (the rules of
 * `ValidateLabelSelector`, k8s.io/apimachinery pkg/apis/meta/v1/validation). `path` prefixes the issues.
 */
export function validateSelector(selector: LabelSelector, path: string): SelectorIssue[] {
  const issues: SelectorIssue[] = [];
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    const at = `${path}.matchLabels[${key}]`;
    const keyProblem = checkLabelKey(key);
    if (keyProblem) issues.push({ path: at, message: `${at}: ${keyProblem}` });
    const valueProblem = checkLabelValue(value);
    if (valueProblem) issues.push({ path: at, message: `${at}: ${valueProblem}` });
  }
  (selector.matchExpressions ?? []).forEach((req, i) => {
    const at = `${path}.matchExpressions[${i}]`;
    const keyProblem = checkLabelKey(req.key);
    if (keyProblem) issues.push({ path: `${at}.key`, message: `${at}.key: ${keyProblem}` });
    const values = req.values ?? [];
    if ((req.operator === 'In' || req.operator === 'NotIn') && values.length === 0) {
      issues.push({ path: `${at}.values`, message: `${at}.values must not be empty when operator is ${req.operator}` });
    }
    if ((req.operator === 'Exists' || req.operator === 'DoesNotExist') && values.length > 0) {
      issues.push({ path: `${at}.values`, message: `${at}.values must be empty when operator is ${req.operator}` });
    }
    values.forEach((v, j) => {
      const problem = checkLabelValue(v);
      if (problem) issues.push({ path: `${at}.values[${j}]`, message: `${at}.values[${j}]: ${problem}` });
    });
  });
  return issues;
}

/**
 * Parses the kubectl / `labels.Parse` selector syntax into a `LabelSelector`: comma-separated requirements
 * `key`, `!key`, `key=value`, `key==value`, `key!=value`, `key in (a,b)`, `key notin (a,b)`.
 * `=`/`==` become `matchLabels`; the rest `matchExpressions`. An empty or blank string gives `{}` (everything).
 * A syntax problem is returned as data (`BAD_SELECTOR`, the first problem, `position` = offset of the
 * requirement in `text`); keys and values are checked by `validateSelector`, not here.
 */
export function parseSelectorString(
  text: string,
): { ok: true; selector: LabelSelector } | { ok: false; error: ErrorData } {
  const split = splitRequirements(text);
  if (!Array.isArray(split)) return { ok: false, error: split };
  const selector: LabelSelector = {};
  for (const { part, offset } of split) {
    const problem = addRequirement(selector, part);
    if (problem) return { ok: false, error: { code: 'BAD_SELECTOR', message: problem, position: offset } };
  }
  return { ok: true, selector };
}

/** Adds one requirement to `selector`; returns the problem when it does not parse. */
function addRequirement(selector: LabelSelector, part: string): string | undefined {
  const setMatch = /^(\S+)\s+(in|notin)\s*\((.*)\)$/.exec(part);
  if (setMatch) {
    const [, key = '', word, list = ''] = setMatch;
    const values = list.split(',').map((v) => v.trim());
    if (values.some((v) => v === '') && values.length > 1) return `empty value in "${part}"`;
    const operator = word === 'in' ? 'In' : 'NotIn';
    pushExpression(selector, { key, operator, values: values.filter((v) => v !== '') });
    return undefined;
  }
  const cmp = /^([^=!\s]+)\s*(==|=|!=)\s*([^=!\s]*)$/.exec(part);
  if (cmp) {
    const [, key = '', op, value = ''] = cmp;
    if (op === '!=') pushExpression(selector, { key, operator: 'NotIn', values: [value] });
    else {
      selector.matchLabels ??= {};
      setOwn(selector.matchLabels, key, value);
    }
    return undefined;
  }
  const exists = /^(!?)\s*([^=!\s()]+)$/.exec(part);
  if (exists) {
    const [, not, key = ''] = exists;
    pushExpression(selector, { key, operator: not ? 'DoesNotExist' : 'Exists' });
    return undefined;
  }
  return `cannot parse requirement "${part}" (expected key, !key, key=value, key!=value, key in (a,b) or key notin (a,b))`;
}

function pushExpression(selector: LabelSelector, req: Requirement): void {
  selector.matchExpressions ??= [];
  selector.matchExpressions.push(req);
}

/**
 * Splits on commas outside parentheses; trims; drops nothing: an empty requirement or unbalanced
 * parentheses are a `BAD_SELECTOR` error. Each part comes with its offset in `text`.
 */
function splitRequirements(text: string): Array<{ part: string; offset: number }> | ErrorData {
  if (text.trim() === '') return [];
  const parts: Array<{ part: string; offset: number }> = [];
  const bad = (message: string, position: number): ErrorData => ({ code: 'BAD_SELECTOR', message, position });
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (depth < 0) return bad(`unbalanced ")" in "${text}"`, i);
    if (ch === ',' && depth === 0) {
      parts.push(trimmedPart(text, start, i));
      start = i + 1;
    }
  }
  if (depth !== 0) return bad(`unbalanced "(" in "${text}"`, text.lastIndexOf('('));
  parts.push(trimmedPart(text, start, text.length));
  const empty = parts.find((p) => p.part === '');
  if (empty) return bad(`empty requirement in "${text}"`, empty.offset);
  return parts;
}

function trimmedPart(text: string, start: number, end: number): { part: string; offset: number } {
  const raw = text.slice(start, end);
  return { part: raw.trim(), offset: start + (raw.length - raw.trimStart().length) };
}

/** Renders a selector in the kubectl syntax for messages, e.g. `app=web,tier notin (db)`; `{}` renders as `<everything>`. */
export function formatSelector(selector: LabelSelector): string {
  let text = formatted.get(selector);
  if (text === undefined) {
    text = format(selector);
    formatted.set(selector, text);
  }
  return text;
}

/**
 * Selectors come from the config and are formatted for every workload's trace: once each.
 * Module state by design: a memo keyed by a selector from the config, never changed after loading.
 */
const formatted = new WeakMap<LabelSelector, string>();

function format(selector: LabelSelector): string {
  const parts = Object.entries(selector.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const req of selector.matchExpressions ?? []) {
    if (req.operator === 'Exists') parts.push(req.key);
    else if (req.operator === 'DoesNotExist') parts.push(`!${req.key}`);
    else parts.push(`${req.key} ${req.operator === 'In' ? 'in' : 'notin'} (${(req.values ?? []).join(',')})`);
  }
  return parts.length === 0 ? '<everything>' : parts.join(',');
}
