/**
 * One app Deployment in namespace `shop` and, for each driver, a functionConfig that injects it (the namespace
 * labelled as OSM and FSM monitor it; the custom driver with one sidecar and one volume): the input of the
 * read-only tests of uninject (test/core/uninject-read-only*.test.ts).
 */
type Obj = Record<string, any>;

export const APP = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: web:1
        ports:
        - containerPort: 8080
`;

const monitored = (label: string) => ({ namespaces: [{ name: 'shop', labels: label }] });
const SECTIONS: Record<string, Obj> = {
  istio: {},
  linkerd: {},
  osm: monitored('openservicemesh.io/monitored-by: osm'),
  fsm: monitored('flomesh.io/monitored-by: fsm'),
  kuma: {},
  custom: {
    custom: {
      templates: {
        sidecar:
          'spec:\n  containers:\n  - name: shipper\n    image: "s:1"\n  volumes:\n  - name: logs\n    emptyDir: {}\n',
      },
    },
  },
};

export function fnConfig(mesh: string): Obj {
  const extra = SECTIONS[mesh] ?? {};
  const namespaces = Array.isArray(extra.namespaces)
    ? (extra.namespaces as Obj[]).map((n) => {
        const [k, v] = String(n.labels).split(': ');
        return { name: n.name, labels: { [String(k)]: v } };
      })
    : undefined;
  return {
    apiVersion: 'meshinject.dev/v1alpha1',
    kind: 'SidecarInjection',
    metadata: { name: 't' },
    spec: {
      mesh,
      policy: 'enabled',
      resultAnnotations: false,
      ...(namespaces ? { namespaces } : {}),
      ...(extra.custom ? { custom: extra.custom } : {}),
    },
  };
}
