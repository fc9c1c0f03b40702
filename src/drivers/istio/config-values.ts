/**
 * The Istio settings that live both as `spec.istio` fields and in the chart values (`global.proxy.autoInject`, the
 * webhook's selectors, `enableNamespacesByDefault`, `revision`), and the reading of the values themselves: the
 * pasted ConfigMap text of `values` and `meshConfig`, typed reads of derived settings, and the shape checks of what
 * the JSON Schema does not cover. Used by `loadIstioConfig` (./config.ts).
 */
import { parseDocument } from 'yaml';
import { defined } from '../../checked.ts';
import type { ConfigIssue } from '../../config/schema-issues.ts';
import { quoteValue } from '../../config/schema-issues.ts';
import type { DriverConfigInput } from '../../contract/driver.ts';
import { getIn, isJsonObject, setOwn } from '../../json.ts';
import type { Json, JsonObject, LabelSelector } from '../../model.ts';
import { quoteData } from '../../results/quote.ts';
import { validateSelector } from '../../selection/label-selector.ts';

/** The settings that exist both as spec fields and in the chart values, resolved (see `loadIstioConfig`). */
export interface ValueSettings {
  policy: 'enabled' | 'disabled';
  never: LabelSelector[];
  always: LabelSelector[];
  byDefault: boolean;
  revision: string;
}

/**
 * Resolves the settings shared by spec fields and values (explicit field, else values, else default),
 * checks selectors taken from the values, and writes the resolved settings back into `values`. `path` is
 * the driver section's path, `core` the root of the core fields (`spec` or `data`).
 */
export function resolveValueSettings(
  values: JsonObject,
  fromValues: ReturnType<typeof valuesReader>,
  explicit: Pick<DriverConfigInput['explicit'], 'policy' | 'neverInjectSelector' | 'alwaysInjectSelector'>,
  istio: { enableNamespacesByDefault?: boolean; revision?: string },
  path: string,
  core: 'spec' | 'data',
  issues: ConfigIssue[],
): ValueSettings {
  const at = (key: string) => `${path}.${key}`;
  const policy =
    fromValues.pick(
      explicit.policy,
      `${core}.policy`,
      ['global', 'proxy', 'autoInject'],
      isPolicy,
      'enabled or disabled',
    ) ?? 'enabled';
  const never =
    fromValues.pick(
      explicit.neverInjectSelector,
      `${core}.neverInjectSelector`,
      ['sidecarInjectorWebhook', 'neverInjectSelector'],
      isSelectorList,
      'a list of label selectors',
    ) ?? [];
  const always =
    fromValues.pick(
      explicit.alwaysInjectSelector,
      `${core}.alwaysInjectSelector`,
      ['sidecarInjectorWebhook', 'alwaysInjectSelector'],
      isSelectorList,
      'a list of label selectors',
    ) ?? [];
  const byDefault =
    fromValues.pick(
      istio.enableNamespacesByDefault,
      at('enableNamespacesByDefault'),
      ['sidecarInjectorWebhook', 'enableNamespacesByDefault'],
      isBoolean,
      'a boolean',
    ) ?? false;
  const revision =
    fromValues.pick(istio.revision, at('revision'), ['revision'], isRevision, 'empty or a DNS label') ?? '';
  if (explicit.neverInjectSelector === undefined)
    never.forEach((s, i) => {
      issues.push(...validateSelector(s, `${at('values')}.sidecarInjectorWebhook.neverInjectSelector[${i}]`));
    });
  if (explicit.alwaysInjectSelector === undefined)
    always.forEach((s, i) => {
      issues.push(...validateSelector(s, `${at('values')}.sidecarInjectorWebhook.alwaysInjectSelector[${i}]`));
    });
  setIn(values, ['global', 'proxy', 'autoInject'], policy);
  setIn(values, ['sidecarInjectorWebhook', 'neverInjectSelector'], never);
  setIn(values, ['sidecarInjectorWebhook', 'alwaysInjectSelector'], always);
  setIn(values, ['sidecarInjectorWebhook', 'enableNamespacesByDefault'], byDefault);
  setIn(values, ['revision'], revision);
  return { policy, never, always, byDefault, revision };
}

/**
 * Parses `spec.istio.values` / `spec.istio.meshConfig`: an object is used as is; a string is the pasted
 * ConfigMap content (values: JSON, else YAML; meshConfig: YAML). Empty text is `{}`. Pushes an issue and
 * returns `{}` when the text does not parse or does not hold an object.
 */
export function parseEmbedded(
  input: JsonObject | string | undefined,
  path: string,
  what: 'values' | 'meshConfig',
  issues: ConfigIssue[],
): JsonObject {
  if (input === undefined) return {};
  if (typeof input !== 'string') return input;
  let parsed: unknown;
  const expected = what === 'values' ? 'JSON or YAML' : 'YAML';
  try {
    parsed = what === 'values' ? JSON.parse(input) : undefined;
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined) {
    try {
      const doc = parseDocument(input, { prettyErrors: false });
      const [error] = doc.errors;
      if (error) throw error;
      parsed = JSON.parse(JSON.stringify(doc.toJS({ maxAliasCount: 100 }) ?? null)); // plain JSON only (no Infinity, binary)
    } catch (e) {
      issues.push({
        path,
        message: `${path} is a string but not valid ${expected}: ${String((e as Error).message).split('\n')[0]}`,
      });
      return {};
    }
  }
  if (parsed === null || parsed === undefined) return {};
  if (!isJsonObject(parsed as Json)) {
    issues.push({
      path,
      message: `${path} must hold a ${expected} object (a map of settings); got ${Array.isArray(parsed) ? 'a list' : typeof parsed}`,
    });
    return {};
  }
  return parsed as JsonObject;
}

/** Reads derived settings from the merged values, checking their type; see `loadIstioConfig` for precedence. */
export function valuesReader(
  values: JsonObject,
  userValues: JsonObject,
  valuesPath: string,
  issues: ConfigIssue[],
  warnings: string[],
) {
  return {
    pick<T>(
      explicit: T | undefined,
      explicitPath: string,
      keys: string[],
      check: (v: unknown) => v is T,
      expected: string,
    ): T | undefined {
      const fromUser = getIn(userValues, keys);
      const source = `${valuesPath}.${keys.join('.')}`;
      if (explicit !== undefined) {
        if (fromUser !== undefined && JSON.stringify(fromUser) !== JSON.stringify(explicit)) {
          warnings.push(`${explicitPath} (${quoteData(explicit)}) overrides ${source} (${quoteData(fromUser)})`);
        }
        return explicit;
      }
      const v = getIn(values, keys);
      if (v === undefined || v === null) return undefined;
      if (!check(v)) {
        issues.push({ path: source, message: `${source} must be ${expected}; got ${quoteValue(v)}` });
        return undefined;
      }
      return v;
    },
  };
}

/** Sets `value` at `keys` of `obj`, making the maps on the way (own keys only; `keys` is not empty). */
function setIn(obj: JsonObject, keys: readonly string[], value: Json): void {
  let cur = obj;
  for (const k of keys.slice(0, -1)) {
    let next = Object.hasOwn(cur, k) ? cur[k] : undefined;
    if (!isJsonObject(next)) {
      next = {};
      setOwn(cur, k, next);
    }
    cur = next;
  }
  setOwn(cur, defined(keys.at(-1), 'the last key of a values path'), value);
}

/** Whether `v` is a value of `global.proxy.autoInject`. */
export const isPolicy = (v: unknown): v is 'enabled' | 'disabled' => v === 'enabled' || v === 'disabled';
const isBoolean = (v: unknown): v is boolean => typeof v === 'boolean';
const isRevision = (v: unknown): v is string =>
  typeof v === 'string' && /^(?=.{0,63}$)([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$/.test(v);

/** Shape check of a selector list taken from free-form values (the JSON Schema does not cover values). */
export function isSelectorList(v: unknown): v is LabelSelector[] {
  if (!Array.isArray(v)) return false;
  const strings = (x: unknown) => Array.isArray(x) && x.every((s) => typeof s === 'string');
  const obj = (x: unknown): x is Record<string, unknown> => isJsonObject(x as Json);
  return v.every(
    (s) =>
      obj(s) &&
      Object.keys(s).every((k) => k === 'matchLabels' || k === 'matchExpressions') &&
      (s.matchLabels === undefined ||
        (obj(s.matchLabels) && Object.values(s.matchLabels).every((x) => typeof x === 'string'))) &&
      (s.matchExpressions === undefined ||
        (Array.isArray(s.matchExpressions) &&
          s.matchExpressions.every(
            (e) =>
              obj(e) &&
              typeof e.key === 'string' &&
              ['In', 'NotIn', 'Exists', 'DoesNotExist'].includes(e.operator as string) &&
              (e.values === undefined || strings(e.values)),
          ))),
  );
}
