import type { Json, JsonObject, KindPolicy, LabelSelector } from '../model.ts';
import type { Config, TemplateBudgetSetting } from '../model.ts';
import { isJsonObject } from '../json.ts';
import { mergeConfigLayers, type ConfigLayer } from './layering.ts';
import type { LoadResult } from './load.ts';

/**
 * The platform's word (issue #36 §3). With `--platform-config`, the platform's layers are the base and the
 * tenant's (`--config` files, the CLI's override flags) are layered over them; on the fields below the tenant
 * may only narrow what the platform's layers give (set or defaulted): fewer injections, smaller budgets, the
 * same templates. A tenant layer that widens one is an error naming the field, the tenant's layer and the
 * platform's; nothing is injected or written. Compared on the loaded configs (defaults applied, the driver's
 * own defaults resolved), so a field removed (`null`), emptied, replaced or reached through a driver's section
 * (Istio's `values` resolving `policy`) is compared by what it does, not how it is spelled.
 *
 * | field | a tenant may |
 * |---|---|
 * | `mesh` (when the platform sets it) | not change it |
 * | `policy` | turn `enabled` into `disabled`, not back |
 * | `namespaceSelector` | add `matchLabels` and `matchExpressions` to the platform's (every one kept) |
 * | `ignoredNamespaces` | add namespaces (every one of the platform's kept) |
 * | `neverInjectSelector` | add selectors (every one of the platform's kept) |
 * | `alwaysInjectSelector` | drop selectors (none added) |
 * | `kindPolicies` | move a kind towards `skip` (`inject` < `native` < `skip`; unlisted kinds are `inject`) |
 * | `workloadKinds` | drop kinds (none added) |
 * | `templateBudget.*` | lower a budget below the platform's (or the default), not raise it |
 * | the driver's `platformFields` (templates, values, patches) | nothing: they stay as the platform has them |
 */

/** One platform-owned field: its path in messages and in a layer, and whether a tenant's value narrows. */
interface OwnedField {
  /** `spec.ignoredNamespaces`, `spec.templateBudget.steps` (a ConfigMap layer names it `data.<key>`). */
  path: readonly string[];
  /** What a tenant may do with it, for the message. */
  rule: string;
  /** The tenant's config keeps within the platform's on this field. */
  narrows(tenant: Config, platform: Config): boolean;
}

/** The shape of a selector used for set comparisons: its `matchLabels` pairs and `matchExpressions`, as text. */
function selectorParts(s: LabelSelector | undefined): Set<string> {
  const out = new Set<string>();
  for (const [k, v] of Object.entries(s?.matchLabels ?? {})) out.add(JSON.stringify(['=', k, v]));
  for (const e of s?.matchExpressions ?? []) out.add(JSON.stringify([e.operator, e.key, [...(e.values ?? [])].sort()]));
  return out;
}

const selectorKey = (s: LabelSelector): string => JSON.stringify([...selectorParts(s)].sort());
const subset = <T>(a: Iterable<T>, b: ReadonlySet<T>): boolean => [...a].every((x) => b.has(x));
const KIND_RANK: Readonly<Record<KindPolicy, number>> = { inject: 0, native: 1, skip: 2 };

/**
 * The template budgets in force for a config: its `templateBudget` over `defaults` (src/render/budget.ts
 * `DEFAULT_TEMPLATE_BUDGETS`).
 */
function budgetOf(c: Config, defaults: Required<TemplateBudgetSetting>, key: keyof TemplateBudgetSetting): number {
  return c.templateBudget?.[key] ?? defaults[key];
}

function ownedFields(defaults: Required<TemplateBudgetSetting>): OwnedField[] {
  const budget = (key: keyof TemplateBudgetSetting): OwnedField => ({
    path: ['templateBudget', key],
    rule: 'a tenant may lower a template budget, not raise it',
    narrows: (t, p) => budgetOf(t, defaults, key) <= budgetOf(p, defaults, key),
  });
  return [
    {
      path: ['policy'],
      rule: 'a tenant may turn enabled into disabled, not back',
      narrows: (t, p) => t.policy === p.policy || t.policy === 'disabled',
    },
    {
      path: ['namespaceSelector'],
      rule: "a tenant may add requirements to the platform's selector, not drop or change one",
      narrows: (t, p) =>
        p.namespaceSelector === undefined ||
        (t.namespaceSelector !== undefined &&
          subset(selectorParts(p.namespaceSelector), selectorParts(t.namespaceSelector))),
    },
    {
      path: ['ignoredNamespaces'],
      rule: "a tenant may add namespaces, not remove one of the platform's",
      narrows: (t, p) => subset(p.ignoredNamespaces, new Set(t.ignoredNamespaces)),
    },
    {
      path: ['neverInjectSelector'],
      rule: "a tenant may add selectors, not remove or change one of the platform's",
      narrows: (t, p) =>
        subset(p.neverInjectSelector.map(selectorKey), new Set(t.neverInjectSelector.map(selectorKey))),
    },
    {
      path: ['alwaysInjectSelector'],
      rule: "a tenant may drop selectors, not add one the platform's does not have",
      narrows: (t, p) =>
        subset(t.alwaysInjectSelector.map(selectorKey), new Set(p.alwaysInjectSelector.map(selectorKey))),
    },
    {
      path: ['kindPolicies'],
      rule: 'a tenant may move a kind towards skip (inject, native, skip), not back',
      narrows: (t, p) =>
        Object.keys({ ...p.kindPolicies, ...t.kindPolicies }).every(
          (k) => KIND_RANK[t.kindPolicies?.[k] ?? 'inject'] >= KIND_RANK[p.kindPolicies?.[k] ?? 'inject'],
        ),
    },
    {
      path: ['workloadKinds'],
      rule: "a tenant may drop workload kinds, not add one the platform's does not have",
      narrows: (t, p) =>
        subset(
          t.workloadKinds.map((w) => JSON.stringify(w)),
          new Set(p.workloadKinds.map((w) => JSON.stringify(w))),
        ),
    },
    budget('steps'),
    budget('outputSize'),
    budget('runSteps'),
    budget('runOutputSize'),
  ];
}

/** A layer of the run, as `checkPlatformWord` reads it: its name for messages and its content. */
export interface NamedLayer {
  name: string;
  value: JsonObject;
}

/** The value at `path` in a raw layer (`spec.<path>`, or a ConfigMap's `data.<path joined by .>`); undefined when unset. */
function rawAt(layer: JsonObject, path: readonly string[]): Json | undefined {
  if (layer.kind === 'ConfigMap') {
    const data = layer.data;
    const key = path.join('.');
    return isJsonObject(data) && Object.hasOwn(data, key) ? data[key] : undefined;
  }
  let v: Json | undefined = layer.spec;
  for (const k of path) v = isJsonObject(v) && Object.hasOwn(v, k) ? v[k] : undefined;
  return v;
}

/** Whether a layer writes `path` or a field above it (a `null` removing it counts). */
function touches(layer: JsonObject, path: readonly string[]): boolean {
  for (let n = path.length; n >= 1; n--) if (rawAt(layer, path.slice(0, n)) !== undefined) return true;
  return false;
}

function sameJson(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  if (isJsonObject(a) && isJsonObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && sameJson(a[k], b[k]));
  }
  return false;
}

const nameList = (layers: readonly NamedLayer[]): string => layers.map((l) => l.name).join(', ');

/**
 * Checks that the tenant's layers only narrow the platform's on the fields the platform owns (module comment).
 *
 * @param tenant the loaded config of every layer (the platform's, then the tenant's over them)
 * @param platform the loaded config of the platform's layers alone
 * @param raw the raw layers: `platform` (the `--platform-config` files, in order), `tenant` (the others, in order),
 *   and the two merged raw functionConfigs (`merged`: all of them; `platformOnly`)
 * @param driverFields the selected driver's `platformFields` (fields of its section `spec.<mesh>`)
 * @param defaults the template budgets in force when a config sets none (src/render/budget.ts)
 * @returns one message per widened field: `spec.<field>: <tenant layers> widen(s) the platform's value (<platform
 *   layers>, or the default where it sets none): <rule>; ...` (`data.<key>` for a ConfigMap); empty when every
 *   field narrows
 */
export function platformWordProblems(
  tenant: Config,
  platform: Config,
  raw: { platform: readonly NamedLayer[]; tenant: readonly NamedLayer[]; merged: JsonObject; platformOnly: JsonObject },
  driverFields: readonly string[],
  defaults: Required<TemplateBudgetSetting>,
): string[] {
  const problems: string[] = [];
  const root = raw.merged.kind === 'ConfigMap' ? 'data' : 'spec';
  const say = (path: readonly string[], rule: string): void => {
    const setBy = raw.tenant.filter((l) => touches(l.value, path));
    const who = setBy.length
      ? nameList(setBy)
      : `the tenant's layers (${nameList(raw.tenant)}, through the driver's section)`;
    const where = root === 'data' ? `data.${path.join('.')}` : `spec.${path.join('.')}`;
    problems.push(
      `${where}: ${who} widen${setBy.length === 1 ? 's' : ''} the platform's value (${nameList(raw.platform)}, or the default where it sets none): ${rule}; the platform's layers are the last word on this field`,
    );
  };
  if (rawAt(raw.platformOnly, ['mesh']) !== undefined && tenant.mesh !== platform.mesh)
    say(['mesh'], 'the platform chose the mesh; a tenant may not change it');
  else {
    for (const f of driverFields) {
      const path = [tenant.mesh, f];
      if (!sameJson(rawAt(raw.merged, path), rawAt(raw.platformOnly, path)))
        say(path, "the platform's templates, values and patches stay as the platform has them");
    }
  }
  for (const f of ownedFields(defaults)) if (!f.narrows(tenant, platform)) say(f.path, f.rule);
  return problems;
}

/**
 * The platform's word on a run (module comment): the platform's layers merged and loaded alone, compared with
 * the run's loaded config. Nothing to check without platform layers, or when the run's config does not load
 * (its issues are reported instead).
 *
 * @param layers the run's layers: `platform` (`--platform-config`, in order) and `tenant` (`--config`, then the
 *   CLI's override layers)
 * @param merged the run's merged raw functionConfig and its loaded config
 * @param load `loadConfig` bound to the drivers and the run's options
 * @param platformFields the driver's `traits.platformFields`, by mesh name
 * @returns the messages of the fields widened (empty: none), or one message when the platform's layers do not
 *   merge or load on their own
 */
export function checkPlatformWord(
  layers: { platform: readonly ConfigLayer[]; tenant: readonly ConfigLayer[] },
  merged: { raw: JsonObject; loaded: LoadResult },
  load: (raw: JsonObject) => LoadResult,
  platformFields: (mesh: string) => readonly string[],
  defaults: Required<TemplateBudgetSetting>,
): string[] {
  if (layers.platform.length === 0 || !merged.loaded.ok) return [];
  const names = nameList(layers.platform);
  const [first] = layers.platform;
  const p =
    layers.platform.length === 1 && first !== undefined
      ? { ok: true as const, value: first.value }
      : mergeConfigLayers(layers.platform);
  if (!p.ok) return [p.message];
  const platform = load(p.value);
  if (!platform.ok)
    return [
      `the platform's ${names} do not load on their own (${platform.issues[0]?.message}); the platform's layers must be a whole config, which the tenant's may narrow`,
    ];
  const config = merged.loaded.config;
  return platformWordProblems(
    config,
    platform.config,
    { platform: layers.platform, tenant: layers.tenant, merged: merged.raw, platformOnly: p.value },
    platformFields(config.mesh),
    defaults,
  );
}
