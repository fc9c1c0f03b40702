/**
 * The containers and volume the OSM family injects, with their fields in Kubernetes' own order (the order
 * `kubectl get -o yaml` shows after the webhook's patch). Every container carries `resources` (`{}` when
 * unset), as Go's encoding of `corev1.Container` writes it. Sources: OSM `getInitContainerSpec`,
 * `getEnvoySidecarContainerSpec`, the `osm-healthcheck` container and `getVolumeSpec` (pkg/injector/);
 * osm-edge/FSM `getPipySidecarContainerSpec` (pkg/sidecar/.../providers/pipy/driver/pipy_container.go).
 */
import type { JsonObject } from '../../model.ts';
import type { OsmSettings } from './config.ts';
import { PORTS } from './flavor.ts';
import type { ProbeField } from './probes.ts';

/** `env` entry from a pod field (`valueFrom.fieldRef`); `apiVersion` only where the mesh sets it. */
function fieldEnv(name: string, fieldPath: string, apiVersion?: string): JsonObject {
  return { name, valueFrom: { fieldRef: { ...(apiVersion ? { apiVersion } : {}), fieldPath } } };
}

/** `env` entry with a literal value; Go's `omitempty` drops an empty value. */
function valueEnv(name: string, value: string): JsonObject {
  return value === '' ? { name } : { name, value };
}

/** The iptables init container (`osm-init` / `fsm-init`) running `script` as root with NET_ADMIN. */
export function initContainer(s: OsmSettings, script: string): JsonObject {
  return {
    name: s.flavor.initContainerName,
    image: s.images.init,
    command: ['/bin/sh'],
    args: ['-c', script],
    env: [fieldEnv('POD_IP', 'status.podIP', 'v1')],
    resources: s.initResources,
    imagePullPolicy: 'IfNotPresent',
    securityContext: {
      capabilities: { add: ['NET_ADMIN'] },
      privileged: s.enablePrivilegedInitContainer,
      runAsUser: 0,
      runAsNonRoot: false,
    },
  };
}

/** The healthcheck container serving TCP probes turned HTTP (`osm-healthcheck` on port 15904). */
export function healthcheckContainer(s: OsmSettings): JsonObject {
  const f = s.flavor;
  return {
    name: f.healthcheckContainerName,
    image: s.images.healthcheck,
    command: [`/${f.healthcheckContainerName}`],
    args: ['--verbosity', f.injectorLogLevel],
    ports: [{ containerPort: PORTS.healthcheck }],
    resources: s.healthcheckResources,
    imagePullPolicy: 'IfNotPresent',
  };
}

/** The bootstrap Secret volume (`envoy-bootstrap-config-volume` → Secret `envoy-bootstrap-config-<uuid>`). */
export function bootstrapVolume(s: OsmSettings, uuid: string): JsonObject {
  return { name: s.sidecarClass.volumeName, secret: { secretName: `${s.sidecarClass.secretPrefix}${uuid}` } };
}

/** The sidecar's ports: admin, inbound, metrics, then one per probe kind in use (`getEnvoyContainerPorts`). */
function sidecarPorts(uses: Record<ProbeField, boolean>): JsonObject[] {
  return [
    { name: 'proxy-admin', containerPort: PORTS.admin },
    { name: 'proxy-inbound', containerPort: PORTS.inbound },
    { name: 'proxy-metrics', containerPort: PORTS.prometheus },
    ...(uses.livenessProbe ? [{ name: 'liveness-port', containerPort: PORTS.liveness }] : []),
    ...(uses.readinessProbe ? [{ name: 'readiness-port', containerPort: PORTS.readiness }] : []),
    ...(uses.startupProbe ? [{ name: 'startup-port', containerPort: PORTS.startup }] : []),
  ];
}

/** The pod-field environment every sidecar class gets (a fresh list per call). */
const podEnv = (): JsonObject[] => [
  fieldEnv('POD_UID', 'metadata.uid'),
  fieldEnv('POD_NAME', 'metadata.name'),
  fieldEnv('POD_NAMESPACE', 'metadata.namespace'),
  fieldEnv('POD_IP', 'status.podIP'),
  fieldEnv('SERVICE_ACCOUNT', 'spec.serviceAccountName'),
];

/** What the sidecar container depends on for one pod. */
export interface SidecarInput {
  image: string;
  windows: boolean;
  uses: Record<ProbeField, boolean>;
  /** `<service account>.<namespace>` (Envoy's `--service-cluster`; the identity part of the certificate CN). */
  identity: string;
  /** Bootstrap certificate CN prefix `<uuid>.sidecar.<sa>.<namespace>` (pipy repo URL). */
  cnPrefix: string;
  /** pipy: the pod's controller as the mesh derives it from owner references. */
  controller: { kind: string; name: string };
  hold: boolean;
  gracefulExit: boolean;
}

function securityContext(s: OsmSettings, windows: boolean): JsonObject {
  return windows
    ? { windowsOptions: { runAsUserName: s.sidecarClass.name === 'envoy' ? 'EnvoyUser' : 'SidecarUser' } }
    : { runAsUser: PORTS.uid, allowPrivilegeEscalation: false };
}

/** The sidecar container of the configured class (Envoy: `envoy`; pipy: `sidecar`). */
export function sidecarContainer(s: OsmSettings, p: SidecarInput): JsonObject {
  const cls = s.sidecarClass;
  const mount = [{ name: cls.volumeName, readOnly: true, mountPath: cls.configPath }];
  if (cls.name === 'envoy') {
    return {
      name: cls.containerName,
      image: p.image,
      command: ['envoy'],
      args: [
        '--log-level',
        s.logLevel,
        '--config-path',
        `${cls.configPath}/bootstrap.yaml`,
        '--service-cluster',
        p.identity,
      ],
      ports: sidecarPorts(p.uses),
      env: podEnv(),
      resources: s.resources,
      volumeMounts: mount,
      imagePullPolicy: 'IfNotPresent',
      securityContext: securityContext(s, p.windows),
    };
  }
  const codebase = s.repoServer.codebase === '' ? '' : `${s.repoServer.codebase}/`;
  const repo = `http://${s.repoServer.host}:${s.proxyServerPort}/repo/${codebase}${cls.repoSegment}/${p.cnPrefix}/`;
  const lifecycle: JsonObject = {
    ...(p.hold ? { postStart: { exec: { command: ['/usr/local/bin/wait-pipy'] } } } : {}),
    ...(p.gracefulExit ? { preStop: { exec: { command: ['/usr/local/bin/gkill'] } } } : {}),
  };
  return {
    name: cls.containerName,
    image: p.image,
    args: ['pipy', `--log-level=${s.logLevel}`, `--admin-port=${s.proxyServerPort}`, repo],
    ports: sidecarPorts(p.uses),
    env: [
      valueEnv('MESH_NAME', s.meshName),
      ...podEnv(),
      valueEnv('POD_CONTROLLER_KIND', p.controller.kind),
      valueEnv('POD_CONTROLLER_NAME', p.controller.name),
    ],
    resources: s.resources,
    volumeMounts: mount,
    ...(Object.keys(lifecycle).length > 0 ? { lifecycle } : {}),
    imagePullPolicy: 'IfNotPresent',
    securityContext: securityContext(s, p.windows),
  };
}
