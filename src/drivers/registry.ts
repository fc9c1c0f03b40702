import type { MeshName } from '../config/types.ts';
import type { MeshDriver } from './driver.ts';
import { istioDriver } from './istio/index.ts';

/** The drivers this build ships, by `spec.mesh`. An explicit map: no import-time registration. */
const DRIVERS: Partial<Record<MeshName, MeshDriver>> = { istio: istioDriver };

/** The driver for a mesh, or undefined when the mesh is not implemented in this build. */
export function driverFor(mesh: MeshName): MeshDriver | undefined {
  return DRIVERS[mesh];
}
