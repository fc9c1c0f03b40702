import type { JsonObject } from '../../model.ts';
// PLACEHOLDER: filled by the Istio driver work (chart values + DefaultMeshConfig of the documented Istio version).
export const ISTIO_CHART_VALUES: JsonObject = {};
export const ISTIO_MESH_DEFAULTS: JsonObject = {};
