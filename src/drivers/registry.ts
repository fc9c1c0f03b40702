/**
 * The drivers this build ships: an explicit table, no import-time registration (kyaml `framework` style;
 * OSM's `InstallDriver` rule: an unknown name is an error that lists the known ones). Adding a mesh means a
 * folder under `src/drivers/<name>/` and one line here; nothing in the core changes.
 */
import type { MeshDriver } from '../contract/driver.ts';
import { customDriver } from './custom/index.ts';
import { fsmDriver } from './fsm/index.ts';
import { istioDriver } from './istio/index.ts';
import { kumaDriver } from './kuma/index.ts';
import { linkerdDriver } from './linkerd/index.ts';
import { osmDriver } from './osm/index.ts';

/** Every driver, by `spec.mesh` name; the first is the default mesh (`spec.mesh` absent). */
// biome-ignore lint/suspicious/noExplicitAny: each driver's settings type is private to it (MeshDriver<S> is invariant in S)
export const DRIVERS: readonly MeshDriver<any>[] = [
  istioDriver,
  linkerdDriver,
  osmDriver,
  fsmDriver,
  kumaDriver,
  customDriver,
];

/** The names of the known drivers, for messages (`istio, linkerd, ...`). */
export function driverNames(): string[] {
  return DRIVERS.map((d) => d.name);
}

/** The driver named `name`, or undefined. */
export function findDriver(name: string): MeshDriver<unknown> | undefined {
  return DRIVERS.find((d) => d.name === name);
}
