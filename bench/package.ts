/**
 * The peer of `npm run bench` (issue #24): the throughput classes written as a kpt package directory of plain
 * multi-document YAML, read and written by `kpt fn source DIR` (kpt's Go reader and writer, which every kpt
 * pipeline pays for on the same files) and injected by `meshinject -q -c CONFIG DIR`; plus the functionConfig of
 * each mesh the `mixed` class runs with, and how injected workloads are counted in an output.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { BENCH_CONFIG, generateResources, generateWorkloads, toStream, type GeneratedResource } from './generate.ts';

/** The meshes the `mixed` class is injected with; every other throughput class uses Istio. */
export const MESHES = ['istio', 'linkerd', 'osm', 'kuma'] as const;
export type Mesh = (typeof MESHES)[number];

/** The namespaces of generated resources (bench/generate.ts: `team-0` … `team-19`). */
const NAMESPACES = Array.from({ length: 20 }, (_, i) => `team-${i}`);

const HEAD =
  'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata:\n  name: bench\nspec:\n  policy: enabled\n';

/**
 * The functionConfig of each mesh, every workload of the generated inputs injected with containers built by
 * the driver: Istio's built-in templates; Linkerd `manual: true` (as `linkerd inject --manual`; a placeholder
 * trust anchor, which the proxy's environment only carries as text); OSM with every generated namespace
 * labelled `openservicemesh.io/monitored-by: osm` (OSM injects only monitored namespaces); Kuma's defaults.
 */
export const MESH_CONFIGS: Readonly<Record<Mesh, string>> = {
  istio: BENCH_CONFIG,
  linkerd: `${HEAD}  mesh: linkerd\n  linkerd:\n    manual: true\n    values:\n      identityTrustAnchorsPEM: bench-placeholder\n`,
  osm: `${HEAD}  mesh: osm\n  namespaces:\n${NAMESPACES.map((n) => `  - {name: ${n}, labels: {openservicemesh.io/monitored-by: osm}}\n`).join('')}`,
  kuma: `${HEAD}  mesh: kuma\n`,
};

/** The proxy container of each mesh, as `name: <proxy>` in block YAML output. */
export const PROXY_CONTAINER: Readonly<Record<Mesh, string>> = {
  istio: 'istio-proxy',
  linkerd: 'linkerd-proxy',
  osm: 'envoy',
  kuma: 'kuma-sidecar',
};

/** The throughput classes that have a kpt package form. */
export type PackageClass = 'mixed' | 'all-workloads' | 'every-shape-different';

/**
 * The resources of a throughput class of `n` workloads, in package form (no kpt annotations: kpt adds its own):
 * - `mixed`: `generateResources(n)` (workloads, one Service per two, one ConfigMap per four);
 * - `all-workloads`: `generateWorkloads(n)` plus the n/5 first Services of `generateResources(n/5)` — the
 *   issue's input (10 000 workloads and 2 000 Services), every workload injected;
 * - `every-shape-different`: the same with every pod template of its own shape.
 */
export function packageResources(cls: PackageClass, n: number): GeneratedResource[] {
  const opts = { kptAnnotations: false };
  if (cls === 'mixed') return generateResources(n, opts);
  const services = generateResources(Math.max(1, Math.floor(n / 5)) * 2, opts)
    .filter((r) => r.kind === 'Service')
    .slice(0, Math.max(1, Math.floor(n / 5)));
  return [...generateWorkloads(n, cls === 'every-shape-different', opts), ...services];
}

/**
 * Writes `resources` as a kpt package: `dir/resources.yaml` (one multi-document YAML file) and `dir/Kptfile`
 * (kpt reads it as a resource; meshinject skips it in a directory). The directory is emptied first.
 *
 * @returns the path of resources.yaml
 */
export function writePackage(dir: string, resources: readonly GeneratedResource[]): string {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    `${dir}/Kptfile`,
    'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: bench\n  annotations:\n    config.kubernetes.io/local-config: "true"\ninfo:\n  description: meshinject benchmark package\n',
  );
  writeFileSync(`${dir}/resources.yaml`, toStream(resources));
  return `${dir}/resources.yaml`;
}

/** True when `kpt version` runs. */
export function hasKpt(): boolean {
  return spawnSync('kpt', ['version'], { encoding: 'utf8' }).status === 0;
}

/** kpt's version line, or "kpt: not available". */
export function kptVersion(): string {
  const r = spawnSync('kpt', ['version'], { encoding: 'utf8' });
  return r.status === 0 ? `kpt ${r.stdout.trim()}` : 'kpt: not available';
}

/** The number of items of a ResourceList as `kpt fn source` writes it (each item starts a line with `- ` at column 0). */
export function countKptItems(file: string): number {
  return (readFileSync(file, 'utf8').match(/^- /gm) ?? []).length;
}

/**
 * Workloads injected in an output of `mesh`: the number of `meshinject.dev/injection: injected…` annotations,
 * but at most the number of proxy containers (`name: <proxy>` lines, or `"name": "<proxy>"` in JSON), so an
 * output that only annotates does not count as injected.
 */
export function countInjected(file: string, mesh: Mesh): number {
  const text = readFileSync(file, 'utf8');
  const proxy = PROXY_CONTAINER[mesh];
  const marked = (text.match(/meshinject\.dev\/injection"?: ?"?injected\b/g) ?? []).length;
  const proxies =
    (text.match(new RegExp(`\\bname: ${proxy}\\s*$`, 'gm')) ?? []).length +
    (text.match(new RegExp(`"name": ?"${proxy}"`, 'g')) ?? []).length;
  return Math.min(marked, proxies);
}
