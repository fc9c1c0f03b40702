/**
 * The `fsm` mesh driver (Flomesh Service Mesh, pipy sidecars): the OSM family's code (`../osm/`) with FSM's
 * flavor (names, the `flomesh.io/` prefix, defaults). Its file roles are osm's: `osmFamilyDriver(FSM)` takes
 * `../osm/config.ts`, `decide.ts`, `reasons.ts`, `inject.ts`, `probes.ts` and `uninject.ts` with the FSM flavor
 * (`../osm/flavor.ts`). This folder holds only its config section (`./config.schema.json`, which uses the
 * MeshConfig definitions of `../osm/config.schema.json`) and this line.
 */
import type { MeshDriver } from '../../contract/driver.ts';
import { FSM, osmFamilyDriver, type OsmSettings } from '../osm/index.ts';

/** The `fsm` mesh driver. */
export const fsmDriver: MeshDriver<OsmSettings> = osmFamilyDriver(FSM);
