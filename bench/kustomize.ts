/**
 * The kustomize reference of the benchmark: a strategic-merge patch that adds an Istio-like sidecar
 * (istio-proxy container, its volumes and the status annotation) to every Deployment, the way a team
 * without an offline injector would hand-write it. Applied with `kubectl kustomize` (kustomize v5.5).
 */

/** The strategic-merge patch (patches `target: {kind: Deployment}` overrides its `metadata.name`). */
export const KUSTOMIZE_PATCH = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: any
spec:
  template:
    metadata:
      annotations:
        sidecar.istio.io/status: '{"containers":["istio-proxy"],"volumes":["istio-envoy","istio-data","istio-token"]}'
    spec:
      containers:
      - name: istio-proxy
        image: docker.io/istio/proxyv2:1.24.0
        args: [proxy, sidecar, --domain, $(POD_NAMESPACE).svc.cluster.local, --proxyLogLevel=warning]
        ports:
        - {containerPort: 15090, name: http-envoy-prom, protocol: TCP}
        env:
        - name: POD_NAMESPACE
          valueFrom: {fieldRef: {fieldPath: metadata.namespace}}
        resources:
          requests: {cpu: 100m, memory: 128Mi}
          limits: {cpu: "2", memory: 1Gi}
        volumeMounts:
        - {name: istio-envoy, mountPath: /etc/istio/proxy}
        - {name: istio-data, mountPath: /var/lib/istio/data}
        - {name: istio-token, mountPath: /var/run/secrets/tokens}
      volumes:
      - name: istio-envoy
        emptyDir: {medium: Memory}
      - name: istio-data
        emptyDir: {}
      - name: istio-token
        projected:
          sources:
          - serviceAccountToken: {audience: istio-ca, expirationSeconds: 43200, path: istio-token}
`;

/** A kustomization.yaml with one resources file and the patch targeted at every Deployment. */
export function kustomization(resourcesFile: string, patchFile: string): string {
  return `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- ${resourcesFile}
patches:
- path: ${patchFile}
  target:
    kind: Deployment
`;
}
