/**
 * Prometheus "metrics merge": the pod's scrape annotations are handed to the agent (env
 * `ISTIO_PROMETHEUS_ANNOTATIONS`) and replaced by annotations pointing at the agent's status port. Istio
 * `applyPrometheusMerge`, `applySecurePrometheusAnnotation` (pkg/kube/inject/webhook.go; istio-injection.md §6.5).
 */
import type { JsonObject, PodTemplate } from '../../model.ts';
import { InjectError } from '../../results/errors.ts';
import { annotationsOf, envOf, findSidecar, ownedSidecar, parseGoBool } from './pod-fields.ts';
import { atoi } from '../go-parse.ts';

/** Annotation switching the merge per pod (Go bool). */
export const MERGE_METRICS_ANNOTATION = 'prometheus.istio.io/merge-metrics';
/** Annotation listing extra scrape targets, `port:path,port:path` (path defaults to `/metrics`). */
export const SCRAPE_TARGETS_ANNOTATION = 'prometheus.istio.io/scrape-targets';
/** Annotation telling the secure merged-metrics port. */
export const SECURE_PORT_ANNOTATION = 'prometheus.istio.io/secure-port';
/** Proxy env carrying the original scrape configuration. */
export const PROMETHEUS_ENV = 'ISTIO_PROMETHEUS_ANNOTATIONS';

const SCRAPE = 'prometheus_io_scrape';
const PORT = 'prometheus_io_port';
const PATH = 'prometheus_io_path';
/** The labels above (see `prometheusLabelOf`). */
const LABELS: readonly string[] = [SCRAPE, PORT, PATH];

/** Ports the agent and Envoy use themselves; a scrape target may not use them. */
export const RESERVED_PORTS: ReadonlySet<number> = new Set([
  15000, 15001, 15004, 15006, 15008, 15020, 15021, 15053, 15090,
]);

/** Prometheus `strutil.SanitizeLabelName`: every character outside `[a-zA-Z0-9_]` becomes `_`. */
export function sanitizeLabelName(name: string): string {
  return name.replace(/[^a-zA-Z0-9_]/g, '_');
}

/**
 * The prometheus.io label this file looks for (`prometheus_io_scrape`, `_port`, `_path`) that `key` sanitizes to
 * (`sanitizeLabelName`), else `undefined` (every caller compares the answer with those labels). Sanitizing replaces
 * one UTF-16 code unit by one `_` and keeps every other, so it keeps the length and `key` sanitizes to a label
 * exactly when, at each place, the label's letter is the key's, or the label's `_` stands for a `_` or a code unit
 * outside `[a-zA-Z0-9_]`: compared in place, without the copy (most annotation keys differ in length).
 */
function prometheusLabelOf(key: string): string | undefined {
  for (const label of LABELS) if (key.length === label.length && sanitizesTo(key, label)) return label;
  return undefined;
}

/** `sanitizeLabelName(key) === label` for a `label` of `[a-z_]` as long as `key` (see `prometheusLabelOf`). */
function sanitizesTo(key: string, label: string): boolean {
  for (let i = 0; i < label.length; i++) {
    const c = key.charCodeAt(i);
    if (c === label.charCodeAt(i)) continue;
    if (label.charCodeAt(i) !== 95 /* _ */ || isLabelChar(c)) return false;
  }
  return true;
}

/** Whether UTF-16 code unit `c` is in `[a-zA-Z0-9_]` (kept by `sanitizeLabelName`). */
function isLabelChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95;
}

function findByLabel(annos: Record<string, string>, label: string): string | undefined {
  for (const [k, v] of Object.entries(annos)) if (prometheusLabelOf(k) === label) return v;
  return undefined;
}

/** Istio `getPrometheusScrape`: false only when a scrape annotation variant parses as Go bool false. */
export function prometheusScrapeEnabled(annos: Record<string, string>): boolean {
  for (const [k, v] of Object.entries(annos)) {
    if (prometheusLabelOf(k) !== SCRAPE) continue;
    const b = parseGoBool(v);
    if (b !== undefined) return b;
  }
  return true;
}

/** Istio `enablePrometheusMerge`: the pod annotation, else `meshConfig.enablePrometheusMerge`, else true. */
export function prometheusMergeEnabled(meshConfig: JsonObject, annos: Record<string, string>): boolean {
  const a = annos[MERGE_METRICS_ANNOTATION];
  if (a !== undefined) {
    const b = parseGoBool(a);
    if (b !== undefined) return b;
  }
  return typeof meshConfig.enablePrometheusMerge === 'boolean' ? meshConfig.enablePrometheusMerge : true;
}

/** Removes every annotation that sanitizes to prometheus.io scrape/port/path (Istio `clearPrometheusAnnotations`). */
export function clearPrometheusAnnotations(annos: Record<string, string>): void {
  for (const k of Object.keys(annos)) {
    const s = prometheusLabelOf(k);
    if (s === SCRAPE || s === PORT || s === PATH) delete annos[k];
  }
}

/** The value of a prometheus.io port annotation variant, if any (Istio `getPrometheusPort`). */
export function prometheusPort(annos: Record<string, string>): string | undefined {
  return findByLabel(annos, PORT);
}

interface Target {
  port: string;
  path: string;
}

function parseTargets(value: string, statusPort: number): Target[] {
  const out: Target[] = [];
  const bad = (why: string): InjectError =>
    new InjectError(`invalid value '${value}' for annotation '${SCRAPE_TARGETS_ANNOTATION}': ${why}`, {
      field: `metadata.annotations[${SCRAPE_TARGETS_ANNOTATION}]`,
      code: 'BAD_ANNOTATION',
    });
  for (const raw of value.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const i = entry.indexOf(':');
    const port = (i < 0 ? entry : entry.slice(0, i)).trim();
    const path = i < 0 ? '' : entry.slice(i + 1).trim();
    // Istio applyPrometheusMerge: strconv.Atoi, then 1..65535; compared in its canonical form.
    const parsed = atoi(port);
    if (!parsed.ok || parsed.value < 1n || parsed.value > 65535n) throw bad(`invalid port '${port}'`);
    const n = Number(parsed.value);
    if (n === statusPort) throw bad(`port ${n} is the proxy status port`);
    if (RESERVED_PORTS.has(n)) throw bad(`port ${n} is reserved by Istio`);
    out.push({ port, path: path === '' ? '/metrics' : path.startsWith('/') ? path : `/${path}` });
  }
  return out;
}

/**
 * Istio `applyPrometheusMerge`: when scraping and merging are enabled and the pod's port annotation is not
 * already the status port, records the pod's scrape/path/port (and `scrape-targets`) in the proxy env
 * `ISTIO_PROMETHEUS_ANNOTATIONS` (JSON `{"scrape","path","port"[,"targets"]}`, omitted when all empty), deletes
 * every prometheus.io variant and `scrape-targets`, and sets `prometheus.io/{port,path,scrape}` to
 * `<statusPort>`, `/stats/prometheus`, `"true"`.
 * @param statusPort the mesh `defaultConfig.statusPort` (with the pod's `proxy.istio.io/config` applied)
 * @throws InjectError for an invalid `prometheus.istio.io/scrape-targets`
 */
export function applyPrometheusMerge(pod: PodTemplate, meshConfig: JsonObject, statusPort: number): void {
  const annos = annotationsOf(pod);
  if (!prometheusScrapeEnabled(annos) || !prometheusMergeEnabled(meshConfig, annos)) return;
  const target = String(statusPort);
  if (prometheusPort(annos) === target) return;
  const cfg: { scrape: string; path: string; port: string; targets?: Target[] } = {
    scrape: findByLabel(annos, SCRAPE) ?? '',
    path: findByLabel(annos, PATH) ?? '',
    port: findByLabel(annos, PORT) ?? '',
  };
  const targetsValue = annos[SCRAPE_TARGETS_ANNOTATION];
  if (targetsValue !== undefined) {
    const targets = parseTargets(targetsValue, statusPort);
    const [first] = targets;
    if (first) {
      cfg.targets = targets;
      if (cfg.port === '') cfg.port = first.port;
      if (cfg.path === '') cfg.path = first.path;
    }
  }
  const sidecar =
    cfg.scrape !== '' || cfg.path !== '' || cfg.port !== '' || cfg.targets ? ownedSidecar(pod.spec) : undefined;
  if (sidecar) {
    envOf(sidecar).push({ name: PROMETHEUS_ENV, value: JSON.stringify(cfg) });
  }
  clearPrometheusAnnotations(annos);
  delete annos[SCRAPE_TARGETS_ANNOTATION];
  annos['prometheus.io/port'] = target;
  annos['prometheus.io/path'] = '/stats/prometheus';
  annos['prometheus.io/scrape'] = 'true';
}

/**
 * Istio `applySecurePrometheusAnnotation`: a non-empty, non-`0` proxy env `ENVOY_SECURE_MERGED_METRICS_PORT`
 * becomes the annotation `prometheus.istio.io/secure-port`, unless the pod already sets it.
 */
export function applySecurePrometheusAnnotation(pod: PodTemplate): void {
  const sidecar = findSidecar(pod.spec);
  if (!sidecar || !Array.isArray(sidecar.env)) return;
  const env = (sidecar.env as JsonObject[]).find((e) => e.name === 'ENVOY_SECURE_MERGED_METRICS_PORT');
  const v = env && typeof env.value === 'string' ? env.value : '';
  if (v === '' || v === '0') return;
  const annos = annotationsOf(pod);
  if (annos[SECURE_PORT_ANNOTATION] === undefined) annos[SECURE_PORT_ANNOTATION] = v;
}
