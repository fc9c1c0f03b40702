/**
 * Prometheus "metrics merge": the pod's scrape annotations are handed to the agent (env
 * `ISTIO_PROMETHEUS_ANNOTATIONS`) and replaced by annotations pointing at the agent's status port. Istio
 * `applyPrometheusMerge`, `applySecurePrometheusAnnotation` (pkg/kube/inject/webhook.go; istio-injection.md §6.5).
 */
import type { JsonObject, PodTemplate } from '../../model.ts';
import { InjectError } from '../../results/errors.ts';
import { annotationsOf, envOf, findSidecar, ownedSidecar, parseGoBool } from './pod-fields.ts';
import { atoi } from '../go-parse.ts';
import { goTrimSpace } from '../../render/gotemplate/sprig.ts';
import { goJSON } from '../go-json.ts';

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
const TARGETS = 'prometheus_istio_io_scrape_targets';
const SECURE_PORT = 'prometheus_istio_io_secure_port';
/** The labels above (see `prometheusLabelOf`). */
const LABELS: readonly string[] = [SCRAPE, PORT, PATH, TARGETS, SECURE_PORT];

/**
 * Ports the agent and Envoy use themselves, in their canonical form (`strconv.Itoa`), with the reason Istio gives:
 * a scrape port may not be one of them (Istio `IstioReservedPortReason`, pilot/cmd/pilot-agent/status/server.go).
 */
const RESERVED_PORTS: ReadonlyMap<string, string> = new Map([
  ['15000', 'Envoy admin'],
  ['15001', 'outbound traffic capture'],
  ['15004', 'pilot debug'],
  ['15006', 'inbound traffic capture'],
  ['15008', 'HBONE tunnel'],
  ['15020', 'pilot-agent status / merged Prometheus'],
  ['15021', 'Envoy health'],
  ['15053', 'DNS proxy'],
  ['15090', 'Envoy Prometheus (already merged)'],
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

/**
 * Removes every annotation that sanitizes to prometheus.io scrape/port/path or to `prometheus.istio.io/scrape-targets`
 * (Istio `clearPrometheusAnnotations`, its set `prometheusAnnotations`).
 */
export function clearPrometheusAnnotations(annos: Record<string, string>): void {
  for (const k of Object.keys(annos)) {
    const s = prometheusLabelOf(k);
    if (s === SCRAPE || s === PORT || s === PATH || s === TARGETS) delete annos[k];
  }
}

/** The value of a prometheus.io port annotation variant, if any (Istio `getPrometheusPort`). */
export function prometheusPort(annos: Record<string, string>): string | undefined {
  return findByLabel(annos, PORT);
}

/** A scrape target (Istio `ScrapeTarget`): port and path as written, JSON `{"port","path"}`. */
interface Target {
  port: string;
  path: string;
}

/**
 * Istio `ParseScrapeTargets` (pilot/cmd/pilot-agent/status/server.go): comma-separated `port[:path]` entries, each
 * trimmed (`strings.TrimSpace`), the path `/metrics` when absent or blank; undefined (Istio logs a warning and keeps
 * no targets) when an entry has an empty port.
 */
function parseTargets(value: string): Target[] | undefined {
  const out: Target[] = [];
  for (const raw of value.split(',')) {
    const entry = goTrimSpace(raw);
    if (entry === '') continue;
    const colon = entry.indexOf(':');
    const port = goTrimSpace(colon < 0 ? entry : entry.slice(0, colon));
    if (port === '') return undefined;
    const path = colon < 0 ? '' : goTrimSpace(entry.slice(colon + 1));
    out.push({ port, path: path === '' ? '/metrics' : path });
  }
  return out;
}

/**
 * Istio's check of a scrape port (`applyPrometheusMerge`): `strconv.Atoi`, then 1–65535, then its canonical form
 * neither the agent's port nor one of {@link RESERVED_PORTS}. `what` is Istio's wording: `scrape targets` (each
 * target) or `scrape configuration` (the legacy `prometheus.io/port`).
 * @throws InjectError with Istio's message, naming the annotation `key`
 */
function checkScrapePort(port: string, what: 'targets' | 'configuration', target: string, key: string): void {
  const prefix =
    what === 'targets'
      ? 'invalid prometheus scrape targets: target port'
      : 'invalid prometheus scrape configuration: port';
  const bad = (why: string): InjectError =>
    new InjectError(why, { field: `metadata.annotations[${key}]`, code: 'BAD_ANNOTATION' });
  const n = atoi(port);
  if (!n.ok || n.value < 1n || n.value > 65535n) {
    const invalid = what === 'targets' ? 'invalid target port' : 'invalid port';
    throw bad(`invalid prometheus scrape ${what}: ${invalid} ${JSON.stringify(port)}`);
  }
  const canon = String(n.value);
  if (canon === target) throw bad(`${prefix} ${port} conflicts with agent port`);
  const reason = RESERVED_PORTS.get(canon);
  if (reason !== undefined) throw bad(`${prefix} ${port} is reserved for Istio (${reason}) and cannot be scraped`);
}

/**
 * Istio `applyPrometheusMerge` (pkg/kube/inject/webhook.go): when scraping and merging are enabled and the pod's
 * port annotation is not already the status port, reads the pod's scrape/path/port and scrape targets (every key
 * that sanitizes to the label, `getPrometheusScrapeConfiguration`); with targets, port and path become the first
 * target's; checks each target's port, or else the legacy port ({@link checkScrapePort}); records them in the proxy
 * env `ISTIO_PROMETHEUS_ANNOTATIONS` (`json.Marshal`: `{"scrape","path","port"[,"targets"]}`, left out when all are
 * empty); deletes every prometheus.io variant and the scrape targets, and sets `prometheus.io/{port,path,scrape}` to
 * `<statusPort>`, `/stats/prometheus`, `"true"`.
 * @param statusPort the mesh `defaultConfig.statusPort` (with the pod's `proxy.istio.io/config` applied)
 * @throws InjectError for a scrape port Istio refuses
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
  let targetsKey = '';
  for (const [k, v] of Object.entries(annos)) {
    if (prometheusLabelOf(k) !== TARGETS) continue;
    const parsed = parseTargets(v); // (a value Istio cannot parse leaves the targets as they were)
    if (parsed === undefined) continue;
    targetsKey = k;
    if (parsed.length > 0) cfg.targets = parsed;
    else delete cfg.targets;
  }
  const [first] = cfg.targets ?? [];
  if (first) {
    cfg.port = first.port;
    cfg.path = first.path;
    for (const t of cfg.targets ?? []) checkScrapePort(t.port, 'targets', target, targetsKey);
  } else if (cfg.port !== '') {
    const key = Object.keys(annos).find((k) => prometheusLabelOf(k) === PORT) ?? 'prometheus.io/port';
    checkScrapePort(cfg.port, 'configuration', target, key);
  }
  const sidecar =
    cfg.scrape !== '' || cfg.path !== '' || cfg.port !== '' || cfg.targets ? ownedSidecar(pod.spec) : undefined;
  if (sidecar) {
    // Go `json.Marshal(PrometheusScrapeConfiguration)`: fields in this order, strings HTML-escaped
    envOf(sidecar).push({ name: PROMETHEUS_ENV, value: goJSON(cfg) });
  }
  clearPrometheusAnnotations(annos);
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
  // the user's own, under any key that sanitizes to the label, is left as it is
  if (findByLabel(annos, SECURE_PORT) === undefined) annos[SECURE_PORT_ANNOTATION] = v;
}
