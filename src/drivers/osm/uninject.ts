/**
 * Uninject of the OSM family (the driver's `uninject` hook): after the generic removal of what the status
 * annotation names, puts back what that removal cannot, the original probes and the label and annotation values
 * the injection overwrote, from the record the injection kept (`Inventory.detail`, read by `./status.ts`).
 */
import type { PodTemplate } from '../../model.ts';
import type { Inventory } from '../../contract/driver.ts';
import { restoreFromInventory } from './status.ts';

/**
 * The OSM family's `uninject`: `pod` (the injection already removed) with the original probes and overwritten
 * values put back from `inventory.detail` (`restoreFromInventory`, ./status.ts). Returns a new pod.
 */
export function uninjectOsmFamily(pod: PodTemplate, inventory: Inventory): PodTemplate {
  return restoreFromInventory(pod, inventory);
}
