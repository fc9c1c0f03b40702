/**
 * The drivers of the generated inject-then-uninject tests (test/core/uninject-roundtrip-property.test.ts,
 * test/core/uninject-source-texts-property.test.ts): each driver's functionConfig (policy enabled,
 * `resultAnnotations: false`, without `mode`: the test appends it) and what the input stream needs besides the
 * generated Deployment (namespace `shop`; OSM and FSM monitor it; the custom driver's templates).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const head = (mesh: string, extra = '') =>
  `apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: prop}\nspec:\n  mesh: ${mesh}\n  policy: enabled\n  resultAnnotations: false\n${extra}`;
const monitored = (label: string) => `  namespaces:\n  - name: shop\n    labels: {${label}}\n`;
const TEMPLATES = readFileSync(`${ROOT}examples/custom/log-shipper-templates.yaml`, 'utf8');

/** Driver name → its functionConfig (no `mode`) and the documents the input stream needs besides the Deployment. */
export const ROUND_TRIP_DRIVERS: Record<string, { config: string; extra: string }> = {
  istio: { config: head('istio'), extra: '' },
  'istio ambient': { config: head('istio', '  istio:\n    ambient: prefer\n'), extra: '' },
  linkerd: { config: head('linkerd'), extra: '' },
  osm: { config: head('osm', monitored('openservicemesh.io/monitored-by: osm')), extra: '' },
  fsm: { config: head('fsm', monitored('flomesh.io/monitored-by: fsm')), extra: '' },
  kuma: { config: head('kuma'), extra: '' },
  custom: {
    config: readFileSync(`${ROOT}examples/custom/injection.yaml`, 'utf8')
      .replace(/\n {2}namespaceSelector:\n(?: {4}.*\n)+/, '\n  policy: enabled\n')
      .concat('  resultAnnotations: false\n'),
    extra: `---\n${TEMPLATES}`,
  },
};
