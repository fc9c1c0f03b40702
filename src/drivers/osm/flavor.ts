/**
 * The two meshes of the OSM family and their sidecar classes, as data: one code path injects both, the
 * flavor supplies names, the annotation prefix and defaults. Sources (facts only, peers.md §2):
 * - OSM v1.2.4 (openservicemesh/osm 7bec5b6b, chart `charts/osm` at tag v1.2.4): the `envoy` class of `osm`.
 * - osm-edge v1.3.9 (flomesh-io/osm-edge f0c7a18c): the sidecar-driver model (`sidecarClass`,
 *   `sidecarDrivers[]`, interception modes) and the `pipy` class of `osm`.
 * - FSM v1.6.0 (flomesh-io/fsm f1b55bd8, chart `charts/fsm`): the `fsm` mesh, which ships only `pipy`.
 */

/** A sidecar implementation ("sidecar class", `MeshConfig.spec.sidecar.sidecarClass`). */
export type SidecarClassName = 'envoy' | 'pipy';

/** How the mesh's injector rewrites HTTP/TCP probes (see `./probes.ts`). */
export type ProbeStyle =
  /** OSM `rewriteHealthProbes`: HTTP probes to `:1590x/osm-<kind>-probe/<container>`, TCP probes to `:15904/osm-healthcheck`. */
  | 'per-container'
  /** osm-edge/FSM `RewriteHealthProbes`: every probe to `<healthcheckPath>` with `Original-*` headers. */
  | 'healthcheck-path';

/** What one sidecar class needs, with its mesh's default images. */
export interface SidecarClassSpec {
  name: SidecarClassName;
  /** Name of the sidecar container (`constants.EnvoyContainerName` / `SidecarContainerName`). */
  containerName: string;
  /** Name of the bootstrap Secret volume; the Secret is `<secretPrefix><proxy UUID>`. */
  volumeName: string;
  secretPrefix: string;
  /** Where the bootstrap Secret is mounted (read-only). */
  configPath: string;
  probeStyle: ProbeStyle;
  /** Default images: the mesh's chart values (the injector's `*_DEFAULT_*_IMAGE` environment). */
  defaultImage: string;
  /** Default Windows image; `''`: the mesh ships none (a Windows pod is then an error unless configured). */
  defaultWindowsImage: string;
  defaultInitImage: string;
  defaultHealthcheckImage: string;
  /** Default repo-server ("proxy server") port of pipy sidecars; 0 for classes that do not use one. */
  defaultProxyServerPort: number;
  /** Path segment of the pipy repo URL (`/repo/<segment>/<cn prefix>/`); `''` for envoy. */
  repoSegment: string;
}

/** One mesh of the family: `spec.mesh` name, prefix, names and defaults. */
export interface Flavor {
  /** `spec.mesh` and the config section name. */
  mesh: 'osm' | 'fsm';
  /** Product name for messages: `OSM`, `FSM`. */
  title: string;
  /** Annotation/label prefix: `openservicemesh.io` or `flomesh.io`. */
  prefix: string;
  defaultMeshName: string;
  defaultNamespace: string;
  defaultClass: SidecarClassName;
  /** The classes this mesh ships (an unknown class is an error listing these). */
  classes: Partial<Record<SidecarClassName, SidecarClassSpec>>;
  /** Interception modes the mesh knows; the first is the default. */
  interceptionModes: readonly [string, ...string[]];
  /** The interception mode that installs the iptables init container. */
  iptablesMode: string;
  /** The interception mode with no sidecar at all (FSM `NodeLevel`: the pod only gets its UUID label), or undefined. */
  nodeLevelMode?: string;
  initContainerName: string;
  healthcheckContainerName: string;
  /** Command and path served by the healthcheck container (`/osm-healthcheck`). */
  healthcheckPath: string;
  /** Pod label with the proxy UUID (`osm-proxy-uuid`). */
  uuidLabel: string;
  /** iptables chain prefix (`OSM` → `OSM_PROXY_INBOUND`). */
  chainPrefix: string;
  /** Controller Service name, for the pipy repo URL (`<controller>.<namespace>`). */
  controllerName: string;
  /** `--verbosity` of the healthcheck container: the injector's own log level (chart `controllerLogLevel`). */
  injectorLogLevel: string;
  /** pipy only (FSM): `holdApplicationUntilProxyStarts` / `gracefulExitUntilDownstreamEnds` exist, with these defaults. */
  lifecycleDefaults?: { holdApplication: boolean; gracefulExit: boolean };
  /** Pod annotation selecting the sidecar image (FSM `flomesh.io/sidecar-image`), when the mesh has one. */
  sidecarImageAnnotation?: string;
  /** Annotations the mesh honours that this driver does not reproduce: present on the pod or namespace = an error. */
  unsupportedAnnotationPrefixes: readonly string[];
}

/**
 * The pipy class as osm-edge and FSM both define it (`SidecarContainerName`, `SidecarBootstrapConfigVolume`,
 * `BootstrapSecretPrefix`, `PipyProxyConfigPath`, repo port 6060, no default Windows image), with one mesh's
 * images and repo path.
 */
function pipyClass(
  own: Pick<SidecarClassSpec, 'defaultImage' | 'defaultInitImage' | 'defaultHealthcheckImage' | 'repoSegment'>,
): SidecarClassSpec {
  return {
    name: 'pipy',
    containerName: 'sidecar',
    volumeName: 'sidecar-bootstrap-config-volume',
    secretPrefix: 'sidecar-bootstrap-config-',
    configPath: '/etc/pipy',
    probeStyle: 'healthcheck-path',
    defaultWindowsImage: '',
    defaultProxyServerPort: 6060,
    ...own,
  };
}

/** OSM v1.2.4: Envoy (upstream), plus osm-edge's pipy. */
export const OSM: Flavor = {
  mesh: 'osm',
  title: 'OSM',
  prefix: 'openservicemesh.io',
  defaultMeshName: 'osm',
  defaultNamespace: 'osm-system',
  defaultClass: 'envoy',
  classes: {
    envoy: {
      name: 'envoy',
      containerName: 'envoy',
      volumeName: 'envoy-bootstrap-config-volume',
      secretPrefix: 'envoy-bootstrap-config-',
      configPath: '/etc/envoy',
      probeStyle: 'per-container',
      defaultImage:
        'envoyproxy/envoy-distroless:v1.22.2@sha256:541d31419b95e3c62d8cc0967db9cdb4ad2782cc08faa6f15f04c081200e324a',
      defaultWindowsImage:
        'envoyproxy/envoy-windows:v1.22.1@sha256:92733f8e5beae5c45df204a0e13edbd29e99adf962d1b1c7869b197d85c64bd0',
      defaultInitImage: 'openservicemesh/init@sha256:d290df023e305b3a76c8b22fd0a3cfcc7504377e97bfdfeb256b1ca9c4d59d68',
      defaultHealthcheckImage:
        'openservicemesh/osm-healthcheck@sha256:d5a9ad914a7279c52316ee968b97715b0dc854d77cf02a2b68389bb46f656b6f',
      defaultProxyServerPort: 0,
      repoSegment: '',
    },
    pipy: pipyClass({
      defaultImage: 'flomesh/pipy:0.90.3-38',
      defaultInitImage: 'flomesh/osm-edge-sidecar-init:1.3.9',
      defaultHealthcheckImage: 'flomesh/osm-edge-healthcheck:1.3.9',
      repoSegment: 'osm-edge-sidecar',
    }),
  },
  interceptionModes: ['iptables', 'ebpf', 'none'],
  iptablesMode: 'iptables',
  initContainerName: 'osm-init',
  healthcheckContainerName: 'osm-healthcheck',
  healthcheckPath: '/osm-healthcheck',
  uuidLabel: 'osm-proxy-uuid',
  chainPrefix: 'OSM',
  controllerName: 'osm-controller',
  injectorLogLevel: 'info',
  unsupportedAnnotationPrefixes: [
    'openservicemesh.io/sidecar-resource-limits',
    'openservicemesh.io/sidecar-resource-requests',
  ],
};

/** FSM v1.6.0: pipy only. */
export const FSM: Flavor = {
  mesh: 'fsm',
  title: 'FSM',
  prefix: 'flomesh.io',
  defaultMeshName: 'fsm',
  defaultNamespace: 'fsm-system',
  defaultClass: 'pipy',
  classes: {
    pipy: pipyClass({
      defaultImage: 'flomesh/pipy:1.5.14',
      defaultInitImage: 'flomesh/fsm-sidecar-init:1.6.0',
      defaultHealthcheckImage: 'flomesh/fsm-healthcheck:1.6.0',
      repoSegment: 'fsm-sidecar',
    }),
  },
  interceptionModes: ['PodLevel', 'NodeLevel'],
  iptablesMode: 'PodLevel',
  nodeLevelMode: 'NodeLevel',
  initContainerName: 'fsm-init',
  healthcheckContainerName: 'fsm-healthcheck',
  healthcheckPath: '/fsm-healthcheck',
  uuidLabel: 'fsm-proxy-uuid',
  chainPrefix: 'FSM',
  controllerName: 'fsm-controller',
  injectorLogLevel: 'info',
  lifecycleDefaults: { holdApplication: true, gracefulExit: true },
  sidecarImageAnnotation: 'flomesh.io/sidecar-image',
  unsupportedAnnotationPrefixes: [
    'flomesh.io/sidecar-resource-limits',
    'flomesh.io/sidecar-resource-requests',
    'flomesh.io/traffic-warmup',
  ],
};

/** Annotation/label keys of a flavor (`<prefix>/<name>`). */
export function keys(f: Flavor) {
  return {
    monitoredBy: `${f.prefix}/monitored-by`,
    ignore: `${f.prefix}/ignore`,
    injection: `${f.prefix}/sidecar-injection`,
    metrics: `${f.prefix}/metrics`,
    outboundPorts: `${f.prefix}/outbound-port-exclusion-list`,
    inboundPorts: `${f.prefix}/inbound-port-exclusion-list`,
    outboundIPExclusions: `${f.prefix}/outbound-ip-range-exclusion-list`,
    outboundIPInclusions: `${f.prefix}/outbound-ip-range-inclusion-list`,
    holdApplication: `${f.prefix}/hold-application-until-proxy-starts`,
    gracefulExit: `${f.prefix}/graceful-exit-until-downstream-ends`,
    /** meshinject's record of what it injected (not a mesh annotation). */
    status: `meshinject.dev/${f.mesh}-status`,
  };
}

/** Shared port numbers of the family (OSM `pkg/constants`; FSM and osm-edge use the same values). */
export const PORTS = {
  admin: 15000,
  outbound: 15001,
  inbound: 15003,
  prometheus: 15010,
  liveness: 15901,
  readiness: 15902,
  startup: 15903,
  healthcheck: 15904,
  /** Sidecar UID (`EnvoyUID` / `SidecarUID`). */
  uid: 1500,
} as const;
