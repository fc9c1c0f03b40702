/**
 * Loading a functionConfig in tests: through the real loader with the real driver table, and the Istio
 * settings at hand (most unit tests exercise the Istio driver).
 */
import { loadConfig as loadWithDrivers, type LoadResult } from '../../src/config/load.ts';
import type { Config } from '../../src/model.ts';
import type { ActiveMesh } from '../../src/contract/driver.ts';
import type { IstioSettings } from '../../src/drivers/istio/config.ts';
import { DRIVERS } from '../../src/drivers/registry.ts';

/** `loadConfig` with every driver this build ships. */
export const loadConfig = (functionConfig: unknown): LoadResult => loadWithDrivers(functionConfig, DRIVERS);

/** A valid load: the core config, the bound mesh, the Istio settings (when the mesh is istio) and warnings. */
export interface Loaded {
  config: Config;
  mesh: ActiveMesh;
  istio: IstioSettings;
  warnings: string[];
}

/** Loads a functionConfig that must be valid; throws with every issue otherwise. */
export function loaded(functionConfig: unknown): Loaded {
  const r = loadConfig(functionConfig);
  if (!r.ok) throw new Error(`expected a valid config, got ${JSON.stringify(r.issues, null, 2)}`);
  return { config: r.config, mesh: r.mesh, istio: r.settings as IstioSettings, warnings: r.warnings };
}

/** Loads a SidecarInjection with this `spec`. */
export function loadSpec(spec: Record<string, unknown> = {}): Loaded {
  return loaded({ apiVersion: 'meshinject.dev/v1alpha1', kind: 'SidecarInjection', spec });
}

/** A SidecarInjection functionConfig (JSON text, which is YAML) of `spec`, every workload selected (`policy: enabled`). */
export function enabledSpecConfig(spec: Record<string, unknown>): string {
  return JSON.stringify({
    apiVersion: 'meshinject.dev/v1alpha1',
    kind: 'SidecarInjection',
    spec: { policy: 'enabled', ...spec },
  });
}

/**
 * A functionConfig of the custom driver with one sidecar template (`template`, a Handlebars text) and
 * `values.l` a list of ten numbers, every workload selected (`policy: enabled`); `extra`: lines under `spec:`
 * (two-space indented, each ending in a line break), e.g. a `templateBudget`.
 */
export function customTemplateConfig(template: string, extra = ''): string {
  return `apiVersion: meshinject.dev/v1alpha1
kind: SidecarInjection
spec:
  mesh: custom
  policy: enabled
${extra}  custom:
    values: {l: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]}
    templates:
      sidecar: ${JSON.stringify(template)}
`;
}
