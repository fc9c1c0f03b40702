/**
 * Config sections `spec.osm` and `spec.fsm` (schema fragments `./config.schema.json` and
 * `../fsm/config.schema.json`; the ConfigMap form has only `<mesh>.meshName` and `<mesh>.namespace`). The
 * section mirrors the mesh's own `MeshConfig` so that users paste its `spec`; loading resolves the sidecar
 * class, its images and the mesh-wide traffic lists into `OsmSettings`.
 */
import type { ConfigIssue } from '../../config/schema-issues.ts';
import { quoteData } from '../../results/quote.ts';
import { quoteValue } from '../../config/schema-issues.ts';
import { isJsonObject } from '../../json.ts';
import type { Json, JsonObject } from '../../model.ts';
import type { DriverConfigInput, DriverConfigResult } from '../../contract/driver.ts';
import { parseCidr } from './exclusions.ts';
import type { Flavor, SidecarClassName, SidecarClassSpec } from './flavor.ts';
import { defined } from '../../checked.ts';

/** The settings of one run of the osm or fsm driver, validated and defaulted. */
export interface OsmSettings {
  flavor: Flavor;
  /** `openservicemesh.io/monitored-by` value that joins a namespace to this mesh. */
  meshName: string;
  /** Control-plane namespace (never injected). */
  namespace: string;
  sidecarClass: SidecarClassSpec;
  /** Resolved images (see `loadOsmFamilyConfig` for precedence); `windows` is `''` when none is known. */
  images: { sidecar: string; windows: string; init: string; healthcheck: string };
  /** pipy repo ("proxy server") port; 0 for envoy. */
  proxyServerPort: number;
  /** pipy repo address as the sidecar reaches it (`<controller>.<namespace>` unless configured) and codebase. */
  repoServer: { host: string; codebase: string };
  enablePrivilegedInitContainer: boolean;
  /** `ResourceRequirements` of the sidecar, init and healthcheck containers (`{}` when unset). */
  resources: JsonObject;
  initResources: JsonObject;
  healthcheckResources: JsonObject;
  /** Sidecar log level (default `error`, OSM `DefaultEnvoyLogLevel`). */
  logLevel: string;
  localProxyMode: 'Localhost' | 'PodIP';
  interceptionMode: string;
  traffic: {
    inboundPortExclusionList: number[];
    outboundPortExclusionList: number[];
    outboundIPRangeExclusionList: string[];
    outboundIPRangeInclusionList: string[];
    networkInterfaceExclusionList: string[];
  };
  /** FSM's lifecycle hooks (pipy); false for meshes without them. */
  holdApplicationUntilProxyStarts: boolean;
  gracefulExitUntilDownstreamEnds: boolean;
}

type Obj = Record<string, unknown>;

function obj(v: unknown): Obj {
  return isJsonObject<unknown>(v) ? v : {};
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function list<T>(v: unknown): T[] {
  return Array.isArray(v) ? (v as T[]) : [];
}

/**
 * MeshConfig fields that change what the mesh injects and that this driver does not reproduce: set to a
 * truthy value they are a config issue naming the field (refusing rather than writing a different pod).
 */
const UNSUPPORTED: ReadonlyArray<{ path: string[]; why: string }> = [
  {
    path: ['sidecar', 'localDNSProxy', 'enable'],
    why: "the local DNS proxy needs the controller Service's cluster IP, which an offline run cannot know",
  },
  { path: ['sidecar', 'xnetDNSProxy', 'enable'], why: 'the xnet DNS proxy is not reproduced' },
  { path: ['observability', 'tracing', 'enable'], why: 'tracing environment of pipy sidecars is not reproduced' },
  {
    path: ['observability', 'remoteLogging', 'enable'],
    why: 'remote logging environment of pipy sidecars is not reproduced',
  },
];

/**
 * Loads `spec.<mesh>` for `flavor` (driver `loadConfig`). Defaults: meshName/namespace from the flavor
 * (`osm`/`osm-system`, `fsm`/`fsm-system`), sidecarClass the flavor's (`envoy`, `pipy`); an unknown class is
 * an issue listing the flavor's classes. Images resolve as osm-edge's configurator does (`GetSidecarImage`,
 * `GetSidecarWindowsImage`, `GetInitContainerImage`): `sidecar.sidecarImage` (or OSM v1.x `envoyImage` for
 * envoy), else the `sidecarDrivers` entry whose `sidecarName` equals the class (case-insensitive), else the
 * class default; the proxy server port from that entry, else `repoServer.port` (FSM), else the class
 * default. CIDRs of the mesh-wide lists must parse (`net.ParseCIDR`). The driver's decision is OSM's
 * `mustInject`, where no annotation means no injection: `policy` resolves to `disabled` unless set.
 */
export function loadOsmFamilyConfig(flavor: Flavor, input: DriverConfigInput): DriverConfigResult<OsmSettings> {
  const issues: ConfigIssue[] = [];
  const warnings: string[] = [];
  const raw = input.raw;
  const at: At = (...keys) => [input.path, ...keys].join('.');
  const mc = obj(raw.meshConfig);
  const sidecar = obj(mc.sidecar);
  const traffic = obj(mc.traffic);
  const repo = obj(mc.repoServer);

  issues.push(...unsupportedIssues(flavor, mc, at));
  const spec = sidecarClassOf(flavor, sidecar, at, issues);
  const { images, proxyServerPort } = imagesOf(spec, sidecar, repo);
  const meshName = str(raw.meshName) ?? flavor.defaultMeshName;
  const namespace = str(raw.namespace) ?? flavor.defaultNamespace;
  const mode = str(traffic.interceptionMode) ?? flavor.interceptionModes[0];
  if (!flavor.interceptionModes.includes(mode)) {
    issues.push({
      path: at('meshConfig', 'traffic', 'interceptionMode'),
      message: `${at('meshConfig', 'traffic', 'interceptionMode')} must be one of ${flavor.interceptionModes.join(', ')} for ${flavor.title}; got ${quoteValue(mode)}`,
    });
  }
  const trafficLists = trafficListsOf(traffic, at, issues);
  const fsm = fsmSidecarSettings(flavor, spec, sidecar, at, warnings);
  const settings: OsmSettings = {
    flavor,
    meshName,
    namespace,
    sidecarClass: spec,
    images,
    proxyServerPort,
    repoServer: repoServerOf(flavor, repo, namespace),
    enablePrivilegedInitContainer: sidecar.enablePrivilegedInitContainer === true,
    resources: isJsonObject(sidecar.resources as Json) ? (sidecar.resources as JsonObject) : {},
    initResources: fsm.initResources,
    healthcheckResources: fsm.healthcheckResources,
    logLevel: str(sidecar.logLevel) ?? 'error',
    localProxyMode: sidecar.localProxyMode === 'PodIP' ? 'PodIP' : 'Localhost',
    interceptionMode: mode,
    traffic: trafficLists,
    holdApplicationUntilProxyStarts: fsm.holdApplicationUntilProxyStarts,
    gracefulExitUntilDownstreamEnds: fsm.gracefulExitUntilDownstreamEnds,
  };
  return { settings, issues, warnings };
}

/** The dotted config path of `keys` under the section, e.g. `spec.osm.meshConfig.sidecar`. */
type At = (...keys: string[]) => string;

/** An issue for each `UNSUPPORTED` MeshConfig field set to true in `mc`, naming the field and why. */
function unsupportedIssues(flavor: Flavor, mc: Obj, at: At): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const u of UNSUPPORTED) {
    let v: unknown = mc;
    for (const k of u.path) v = obj(v)[k];
    if (v === true)
      issues.push({
        path: at('meshConfig', ...u.path),
        message: `${at('meshConfig', ...u.path)} is true, which meshinject's ${flavor.mesh} driver does not support: ${u.why}`,
      });
  }
  return issues;
}

/**
 * The sidecar class `sidecar.sidecarClass` (case-insensitive), else the flavor's default. An unknown class
 * is an issue listing the flavor's classes, and the default class is used so that loading goes on.
 */
function sidecarClassOf(flavor: Flavor, sidecar: Obj, at: At, issues: ConfigIssue[]): SidecarClassSpec {
  const known = Object.keys(flavor.classes) as SidecarClassName[];
  const className = str(sidecar.sidecarClass) ?? flavor.defaultClass;
  const cls = flavor.classes[className.toLowerCase() as SidecarClassName];
  if (!cls) {
    issues.push({
      path: at('meshConfig', 'sidecar', 'sidecarClass'),
      message: `${at('meshConfig', 'sidecar', 'sidecarClass')}: unknown sidecar class ${quoteData(className)}; known classes of ${flavor.title}: ${known.join(', ')}`,
    });
  }
  return cls ?? defined(flavor.classes[flavor.defaultClass], `the default sidecar class of ${flavor.title}`);
}

/**
 * Images and pipy proxy server port of class `spec`, as osm-edge's configurator resolves them
 * (`GetSidecarImage`, `GetSidecarWindowsImage`, `GetInitContainerImage`): the `sidecar.*Image` field (or OSM
 * v1.x `envoyImage` / `envoyWindowsImage` for envoy), else the `sidecarDrivers` entry whose `sidecarName`
 * equals the class (case-insensitive), else the class default. The port: that entry's, else
 * `repoServer.port` (FSM), else the class default; 0 for envoy.
 */
function imagesOf(spec: SidecarClassSpec, sidecar: Obj, repo: Obj): Pick<OsmSettings, 'images' | 'proxyServerPort'> {
  const entry = list<Obj>(sidecar.sidecarDrivers)
    .map(obj)
    .find((d) => typeof d.sidecarName === 'string' && d.sidecarName.toLowerCase() === spec.name);
  const envoyOnly = (k: string) => (spec.name === 'envoy' ? str(sidecar[k]) : undefined);
  const images = {
    sidecar: str(sidecar.sidecarImage) ?? envoyOnly('envoyImage') ?? str(entry?.sidecarImage) ?? spec.defaultImage,
    windows:
      str(sidecar.sidecarWindowsImage) ??
      envoyOnly('envoyWindowsImage') ??
      str(entry?.sidecarWindowsImage) ??
      spec.defaultWindowsImage,
    init: str(sidecar.initContainerImage) ?? str(entry?.initContainerImage) ?? spec.defaultInitImage,
    healthcheck: spec.defaultHealthcheckImage,
  };
  const proxyServerPort =
    spec.name === 'pipy'
      ? typeof entry?.proxyServerPort === 'number'
        ? entry.proxyServerPort
        : typeof repo.port === 'number'
          ? repo.port
          : spec.defaultProxyServerPort
      : 0;
  return { images, proxyServerPort };
}

/**
 * The pipy repo as the sidecar reaches it: `repoServer.ipaddr`, unless unset or a loopback address (then
 * the controller Service `<controller>.<namespace>`), and `repoServer.codebase` without its outer slashes.
 */
function repoServerOf(flavor: Flavor, repo: Obj, namespace: string): OsmSettings['repoServer'] {
  const ipaddr = str(repo.ipaddr);
  const host =
    ipaddr === undefined || ipaddr.startsWith('127.') || ipaddr.toLowerCase() === 'localhost'
      ? `${flavor.controllerName}.${namespace}`
      : ipaddr;
  const codebase = (str(repo.codebase) ?? '').replace(/^\//, '').replace(/\/$/, '');
  return { host, codebase };
}

/**
 * The mesh-wide traffic lists of `meshConfig.traffic`. Interface names must be valid Linux names (at most 15
 * characters) and CIDRs must parse (`net.ParseCIDR`); each invalid entry is an issue (interfaces first, then
 * the exclusion and inclusion CIDRs) and is left out.
 */
function trafficListsOf(traffic: Obj, at: At, issues: ConfigIssue[]): OsmSettings['traffic'] {
  const ifaces = list<unknown>(traffic.networkInterfaceExclusionList);
  ifaces.forEach((n, i) => {
    if (typeof n !== 'string' || !/^[A-Za-z0-9_.:@-]{1,15}$/.test(n)) {
      issues.push({
        path: `${at('meshConfig', 'traffic', 'networkInterfaceExclusionList')}[${i}]`,
        message: `${at('meshConfig', 'traffic', 'networkInterfaceExclusionList')}[${i}] must be a network interface name (letters, digits, _ . : @ -, at most 15); got ${quoteValue(n)}`,
      });
    }
  });
  const cidrs = (key: string): string[] => {
    const out: string[] = [];
    list<unknown>(traffic[key]).forEach((c, i) => {
      if (typeof c === 'string' && parseCidr(c)) out.push(c);
      else
        issues.push({
          path: `${at('meshConfig', 'traffic', key)}[${i}]`,
          message: `${at('meshConfig', 'traffic', key)}[${i}] must be a CIDR (e.g. 10.0.0.0/8); got ${quoteValue(c)}`,
        });
    });
    return out;
  };
  return {
    inboundPortExclusionList: list<number>(traffic.inboundPortExclusionList),
    outboundPortExclusionList: list<number>(traffic.outboundPortExclusionList),
    outboundIPRangeExclusionList: cidrs('outboundIPRangeExclusionList'),
    outboundIPRangeInclusionList: cidrs('outboundIPRangeInclusionList'),
    networkInterfaceExclusionList: ifaces.filter((n): n is string => typeof n === 'string'),
  };
}

/**
 * FSM-only sidecar settings: init and healthcheck container resources (FSM `MeshConfig.sidecar`), and the
 * lifecycle hooks of pipy sidecars (`holdApplicationUntilProxyStarts`, `gracefulExitUntilDownstreamEnds`,
 * defaulting to the flavor's `lifecycleDefaults`). Each one set where the mesh or class does not read it
 * is a warning and is ignored (`{}` / false).
 */
function fsmSidecarSettings(
  flavor: Flavor,
  spec: SidecarClassSpec,
  sidecar: Obj,
  at: At,
  warnings: string[],
): Pick<
  OsmSettings,
  'initResources' | 'healthcheckResources' | 'holdApplicationUntilProxyStarts' | 'gracefulExitUntilDownstreamEnds'
> {
  const fsmOnly = (k: string): JsonObject => {
    const v = sidecar[k];
    if (v === undefined) return {};
    if (!flavor.lifecycleDefaults)
      warnings.push(`${at('meshConfig', 'sidecar', k)} is not read by ${flavor.title}: ignored`);
    return flavor.lifecycleDefaults && isJsonObject(v as Json) ? (v as JsonObject) : {};
  };
  const lifecycle = (
    k: 'holdApplicationUntilProxyStarts' | 'gracefulExitUntilDownstreamEnds',
    def: boolean | undefined,
  ): boolean => {
    if (def === undefined || spec.name !== 'pipy') {
      if (sidecar[k] !== undefined)
        warnings.push(
          `${at('meshConfig', 'sidecar', k)} is not read by ${flavor.title}'s ${spec.name} sidecar: ignored`,
        );
      return false;
    }
    return typeof sidecar[k] === 'boolean' ? sidecar[k] : def;
  };
  return {
    initResources: fsmOnly('initResources'),
    healthcheckResources: fsmOnly('healthcheckResources'),
    holdApplicationUntilProxyStarts: lifecycle(
      'holdApplicationUntilProxyStarts',
      flavor.lifecycleDefaults?.holdApplication,
    ),
    gracefulExitUntilDownstreamEnds: lifecycle(
      'gracefulExitUntilDownstreamEnds',
      flavor.lifecycleDefaults?.gracefulExit,
    ),
  };
}
