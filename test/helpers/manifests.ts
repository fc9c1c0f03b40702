/**
 * Small manifests for the Istio driver's tests (ambient, revisions, migrate): a Namespace and a Deployment with
 * the labels a case needs, as YAML text, and a stream parsed back into objects. Not a test file itself.
 */
import { parseAllDocuments } from 'yaml';
import type { Obj } from './e2e.ts';

/** A `v1` Namespace with `labels` (a flow map) and, when given, an Argo CD sync wave. */
export function namespaceYaml(name: string, labels: Record<string, string>, wave?: number): string {
  return `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n  labels: ${JSON.stringify(labels)}\n${wave === undefined ? '' : `  annotations: {argocd.argoproj.io/sync-wave: "${wave}"}\n`}`;
}

/** A Deployment `name` in `ns` whose pod template carries `app: <name>` and `podLabels`, with one container `app`. */
export function deploymentYaml(name: string, ns: string, podLabels: Record<string, string>): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  namespace: ${ns}
spec:
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata:
      labels: ${JSON.stringify({ app: name, ...podLabels })}
    spec:
      containers:
      - name: app
        image: app:1
`;
}

/** The documents of a YAML stream as objects (empty documents left out). */
export function docsOf(text: string): Obj[] {
  return parseAllDocuments(text).map((d) => d.toJS() as Obj).filter((d) => d !== null);
}
