/**
 * Fixture builders shared by the tests: workloads and namespaces written as a user would write them, as YAML text
 * (tests compare bytes, so the builders fix the layout), and a stream parsed back into objects. Not a test file
 * itself.
 */
import { parseAllDocuments } from 'yaml';
import type { Obj } from './e2e.ts';
import type { WorkloadRef } from '../../src/contract/driver.ts';

/** Options of {@link deployment}; every field has the default noted. */
export interface DeploymentOptions {
  /** `metadata.namespace` (default `shop`); `null` leaves the field out. */
  namespace?: string | null;
  /** The one container's name (default: the Deployment's name) and image (default `<name>:1`). */
  container?: string;
  image?: string;
  /**
   * `block` (default): block maps, `labels: {app: <name>}` in flow; `block-labels`: the labels as a block map
   * too; `flow`: `metadata` and the container as flow maps on one line each.
   */
  style?: 'block' | 'block-labels' | 'flow';
  /** Raw text appended right after the pod template's labels (for `style: flow`, inside its `metadata` map). */
  templateExtra?: string;
  /** Without `spec.selector` (default: with `matchLabels: {app: <name>}`). */
  noSelector?: boolean;
}

/**
 * A Deployment of one container as YAML text, ending in a line break:
 *
 * ```yaml
 * apiVersion: apps/v1
 * kind: Deployment
 * metadata:
 *   name: web
 *   namespace: shop
 * spec:
 *   selector: {matchLabels: {app: web}}
 *   template:
 *     metadata:
 *       labels: {app: web}
 *     spec:
 *       containers:
 *       - name: web
 *         image: web:1
 * ```
 */
export function deployment(name: string, opts: DeploymentOptions = {}): string {
  const ns = opts.namespace === undefined ? 'shop' : opts.namespace;
  const container = opts.container ?? name;
  const image = opts.image ?? `${name}:1`;
  const extra = opts.templateExtra ?? '';
  const selector = opts.noSelector ? '' : `  selector: {matchLabels: {app: ${name}}}\n`;
  if (opts.style === 'flow') {
    const meta = ns === null ? `{name: ${name}}` : `{name: ${name}, namespace: ${ns}}`;
    return `apiVersion: apps/v1\nkind: Deployment\nmetadata: ${meta}\nspec:\n${selector}  template:\n    metadata: {labels: {app: ${name}}${extra}}\n    spec:\n      containers:\n      - {name: ${container}, image: ${image}}\n`;
  }
  const labels =
    opts.style === 'block-labels'
      ? `      labels:\n        app: ${name}${extra}\n`
      : `      labels: {app: ${name}}${extra}\n`;
  return `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ${name}\n${ns === null ? '' : `  namespace: ${ns}\n`}spec:\n${selector}  template:\n    metadata:\n${labels}    spec:\n      containers:\n      - name: ${container}\n        image: ${image}\n`;
}

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
  return parseAllDocuments(text)
    .map((d) => d.toJS() as Obj)
    .filter((d) => d !== null);
}

/** The workload of the driver-level tests: Deployment `web` in namespace `shop` (given, not defaulted). */
export const WEB_WORKLOAD: WorkloadRef = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  name: 'web',
  namespace: 'shop',
  namespaceDefaulted: false,
};
