import type { SchemaError } from './validators.gen.js';
import { suggest } from '../suggest.ts';
import { quoteValue } from '../results/quote.ts';

export { QUOTED_VALUE_CHARS, quoteValue } from '../results/quote.ts';

import type { ConfigIssue } from '../model.ts';

export type { ConfigIssue } from '../model.ts';

/**
 * Turns a JSON Pointer (`/spec/namespaces/0/name`) into a field path (`spec.namespaces[0].name`). Array
 * indices and keys holding `/` or characters outside `[A-Za-z0-9_.-]` are bracketed
 * (`matchLabels[app.kubernetes.io/name]`); other keys are joined with dots, so ConfigMap keys stay readable
 * (`data.istio.revision`). The empty pointer is `functionConfig`.
 */
export function pointerToPath(pointer: string): string {
  if (pointer === '') return 'functionConfig';
  const segments = pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  return joinPath(segments);
}

/** Joins keys into a field path (see `pointerToPath`). */
export function joinPath(segments: Array<string | number>): string {
  let out = '';
  for (const seg of segments) {
    const s = String(seg);
    if (typeof seg === 'number' || /^\d+$/.test(s) || !/^[A-Za-z0-9_.-]+$/.test(s)) out += `[${s}]`;
    else out += out === '' ? s : `.${s}`;
  }
  return out;
}

/** Renders a value for a message: strings quoted (JSON, cut: `quoteValue`), objects/arrays by type, the rest as JSON. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  if (value !== null && typeof value === 'object') return 'an object';
  if (typeof value === 'string') return quoteValue(value);
  return `${typeof value === 'boolean' ? 'boolean' : typeof value === 'number' ? 'number' : ''} ${JSON.stringify(value)}`.trim();
}

const TYPE_WORDS: Record<string, string> = {
  object: 'an object',
  string: 'a string',
  boolean: 'a boolean (true or false)',
  array: 'an array',
  number: 'a number',
  integer: 'an integer',
  null: 'null',
};

function listValues(values: unknown[]): string {
  return values
    .map((v) =>
      typeof v === 'string' && /^[A-Za-z][-A-Za-z0-9./]*$/.test(v) && !['true', 'false', 'null'].includes(v)
        ? v
        : JSON.stringify(v),
    )
    .join(', ');
}

/**
 * Converts Ajv errors (generated validators, `allErrors` + `verbose`) into issues whose messages name the
 * field and say what is expected, e.g. `spec.policy must be one of enabled, disabled; got "on"`. Unknown
 * fields list the known ones. `stringData` marks the ConfigMap form, whose `data` values must be strings.
 */
export function schemaIssues(errors: SchemaError[], stringData = false): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const err of errors) {
    const at = pointerToPath(err.instancePath);
    const base =
      err.instancePath === ''
        ? []
        : err.instancePath
            .slice(1)
            .split('/')
            .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    const got = `got ${describeValue(err.data)}`;
    const hint =
      stringData && at.startsWith('data.') && typeof err.data !== 'string'
        ? ' (ConfigMap data values are strings: quote the value)'
        : '';
    switch (err.keyword) {
      case 'required': {
        const path = joinPath([...base, String(err.params.missingProperty)]);
        issues.push({ path, message: `${path} is required` });
        break;
      }
      case 'additionalProperties': {
        const extra = String(err.params.additionalProperty);
        const path = joinPath([...base, extra]);
        const known = Object.keys((err.parentSchema?.properties as Record<string, unknown> | undefined) ?? {});
        const what = at === 'data' ? 'key' : 'field';
        const meant = suggest(extra, known);
        issues.push({
          path,
          message: `${path} is not a known ${what}${meant ? ` (did you mean ${joinPath([...base, meant])}?)` : ''}${known.length ? `; expected one of: ${known.join(', ')}` : ''}`,
        });
        break;
      }
      case 'type': {
        const types = Array.isArray(err.schema) ? err.schema : [err.schema];
        const words = types.map((t) => TYPE_WORDS[String(t)] ?? String(t)).join(' or ');
        issues.push({ path: at, message: `${at} must be ${words}; ${got}${hint}` });
        break;
      }
      case 'enum':
        issues.push({
          path: at,
          message: `${at} must be one of ${listValues(err.schema as unknown[])}; ${got}${hint}`,
        });
        break;
      case 'const':
        issues.push({ path: at, message: `${at} must be ${listValues([err.schema])}; ${got}` });
        break;
      case 'pattern': {
        const expected =
          (err.parentSchema?.['x-expected'] as string | undefined) ?? `a string matching ${String(err.schema)}`;
        issues.push({ path: at, message: `${at} must be ${expected}; ${got}` });
        break;
      }
      case 'anyOf': {
        // One issue for the field, in place of one per alternative (each reported before this summary).
        while (issues.at(-1)?.path === at) issues.pop();
        const expected = (err.parentSchema?.['x-expected'] as string | undefined) ?? 'one of the allowed forms';
        issues.push({ path: at, message: `${at} must be ${expected}; ${got}${hint}` });
        break;
      }
      case 'propertyNames':
        // Ajv adds this summary after the failing rule of the key itself (its pattern, naming the key).
        break;
      case 'minItems':
        issues.push({ path: at, message: `${at} must have at least ${String(err.params.limit)} item(s)` });
        break;
      default:
        issues.push({ path: at, message: `${at} ${err.message ?? 'is invalid'}` });
    }
  }
  return issues;
}
