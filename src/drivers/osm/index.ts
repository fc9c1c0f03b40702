/**
 * The OSM driver family: `osm` (Open Service Mesh: Envoy, or osm-edge's pipy) and `fsm` (Flomesh Service
 * Mesh: pipy) share this code and differ only by their `Flavor` (`./flavor.ts`): names, the annotation
 * prefix (`openservicemesh.io/`, `flomesh.io/`) and defaults. Decision `./decide.ts` (OSM `mustInject`),
 * injection `./inject.ts`, status and uninject `./status.ts`. Config sections `spec.osm`
 * (`./config.schema.json`) and `spec.fsm` (`../fsm/config.schema.json`, which reuses this folder's exports).
 */
import { defineDriver, type DriverHelp, type MeshDriver, type ReasonInfo } from '../driver.ts';
import { loadOsmFamilyConfig, type OsmSettings } from './config.ts';
import { decideOsmFamily, OSM_FAMILY_REASONS } from './decide.ts';
import { keys, OSM, type Flavor } from './flavor.ts';
import { injectOsmFamily } from './inject.ts';
import { inventoryOf, readStatus, restoreFromInventory } from './status.ts';

export type { OsmSettings } from './config.ts';
export { FSM, OSM, type Flavor } from './flavor.ts';

/**
 * The driver of one mesh of the family. `inventory` reads the status annotation (undefined when absent or
 * not one meshinject wrote; `inject` refuses the latter with an error); `uninject` puts back the original probes and
 * the label/annotation values the injection overwrote (what generic removal of the inventory cannot).
 */
export function osmFamilyDriver(flavor: Flavor): MeshDriver<OsmSettings> {
  const statusKey = keys(flavor).status;
  const reasonInfo = osmFamilyReasons(flavor);
  return defineDriver<OsmSettings>({
    name: flavor.mesh,
    reasons: OSM_FAMILY_REASONS,
    reasonInfo,
    help: osmFamilyHelp(flavor),
    // No podMetadataPath: the webhook labels and annotates the pods themselves, a CronJob's too. The policy
    // defaults to disabled: the injector injects nothing unasked (`mustInject`, ./decide.ts).
    // The MeshConfig's sidecar settings: its images, a privileged init container.
    traits: { sharedDefaults: { policy: 'disabled' }, platformFields: ['meshConfig'] },
    loadConfig: (input) => loadOsmFamilyConfig(flavor, input),
    decide: decideOsmFamily,
    inject: injectOsmFamily,
    inventory(pod) {
      let rec;
      try {
        rec = readStatus(pod, statusKey);
      } catch {
        return undefined; // not a record meshinject wrote: nothing it can name (inject refuses such a pod)
      }
      return rec ? inventoryOf(rec, statusKey) : undefined;
    },
    uninject: (pod, inventory) => restoreFromInventory(pod, inventory),
  });
}

/** `--help` lines: OSM's config section and opt-in annotation; FSM's are OSM's with its prefix (it adds none). */
function osmFamilyHelp(f: Flavor): DriverHelp {
  if (f !== OSM) return {};
  return {
    config:
      "osm: {meshName: osm, namespace: osm-system, meshConfig: {...}}   # the MeshConfig's spec (fsm: same shape)",
    optIn: `${f.title} ${keys(f).injection}`,
  };
}

/** What each of `OSM_FAMILY_REASONS` means for one flavor (its annotation prefix and title). */
function osmFamilyReasons(f: Flavor): Record<string, ReasonInfo> {
  const k = keys(f);
  return {
    'control-plane-namespace': { description: `the namespace is ${f.title}'s control-plane namespace` },
    'system-namespace': { description: `the namespace is a system namespace ${f.title} never injects` },
    'namespace-not-monitored': { description: `the namespace is not monitored by the mesh (${k.monitoredBy})` },
    'namespace-ignored': { description: `the namespace has the label ${k.ignore}` },
    'namespace-control-plane-label': {
      description: `the namespace has the label control-plane, which ${f.title}'s webhook excludes`,
    },
    'pod-annotation-enabled': { description: `the pod annotation ${k.injection} is enabled` },
    'pod-annotation-disabled': { description: `the pod annotation ${k.injection} is disabled`, optOut: true },
    'namespace-annotation-enabled': { description: `the namespace annotation ${k.injection} is enabled` },
    'namespace-annotation-disabled': {
      description: `the namespace annotation ${k.injection} is disabled`,
      optOut: true,
    },
  };
}

/** The `osm` mesh driver (Open Service Mesh v1.2; osm-edge's pipy class). */
export const osmDriver: MeshDriver<OsmSettings> = osmFamilyDriver(OSM);
