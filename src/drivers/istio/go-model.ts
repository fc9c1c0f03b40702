/**
 * Istio's `SidecarTemplateData` (pkg/kube/inject/inject.go) as a Go-typed value for the Go template engine:
 * the Go field names, Go zero values (an absent `hostNetwork` is `false`, an absent `securityContext` a nil
 * pointer), nil maps, protobuf getters (`.ProxyConfig.GetTracing.GetTlsSettings.GetCaCertificates`,
 * `.HoldApplicationUntilProxyStarts.GetValue`), the interception-mode enum with its `String` method, and
 * `encoding/json` `omitempty` for `structToJSON`. Types Istio's templates never look inside are opaque:
 * they keep their JSON for `toYaml`/`toJSON`, test as non-nil, and refuse field access with an error.
 */
import type { JsonObject, PodTemplate } from '../../model.ts';
import {
  BOOL,
  FLOAT64,
  type GoField,
  type GoMethod,
  type GoType,
  INT32,
  INT64,
  MAP_ANY,
  MAP_STRING,
  SLICE_STRING,
  STRING,
  UINT32,
  Value,
  field,
  fieldOf,
  ptrTo,
  sliceOf,
  structType,
  typed,
  zero,
} from '../../render/gotemplate/value.ts';

/** A Kubernetes or protobuf type whose inside templates do not read. */
function opaque(name: string): GoType {
  return { kind: 'struct', name, opaque: true, fields: [], fieldIndex: new Map() };
}

function named(name: string, kind: GoType['kind'] = 'string'): GoType {
  return { kind, name };
}

const opaqueList = (name: string): GoType => sliceOf(opaque(name));
const opaquePtr = (name: string): GoType => ptrTo(opaque(name));
const INT64_PTR = ptrTo(INT64);
const INT32_PTR = ptrTo(INT32);
const BOOL_PTR = ptrTo(BOOL);
const STRING_PTR = ptrTo(STRING);

/** Adds protobuf `GetX` methods (nil-safe: zero value on a nil receiver) for every field. */
function protoMessage(name: string, fields: GoField[]): GoType {
  const methods = new Map<string, GoMethod>();
  const t = structType(name, fields, methods);
  t.noPrint = true;
  t.partial = true;
  for (const f of fields) {
    methods.set(`Get${f.name}`, { params: [], call: (recv) => (recv === null ? zero(f.type) : fieldOf(recv, f)) });
  }
  return t;
}

/** A protobuf well-known wrapper (`*wrapperspb.BoolValue`...): protojson writes the bare value. */
function wrapper(name: string, inner: GoType): GoType {
  const valueField: GoField = { name: 'Value', json: '', type: inner, omitempty: true, decode: (raw) => raw };
  const t = structType(name, [valueField]);
  t.noPrint = true;
  t.marshal = (v) => v;
  t.methods = new Map([
    ['GetValue', { params: [], call: (recv) => (recv === null ? zero(inner) : typed(inner, recv)) }],
  ]);
  return ptrTo(t);
}

const BOOL_VALUE = wrapper('wrapperspb.BoolValue', BOOL);
const INT32_VALUE = wrapper('wrapperspb.Int32Value', INT32);
const UINT32_VALUE = wrapper('wrapperspb.UInt32Value', UINT32);

/** `*durationpb.Duration`, represented by its protojson text (`"45s"`). */
export const DURATION: GoType = (() => {
  const t = opaque('durationpb.Duration');
  t.noPrint = true;
  return ptrTo(t);
})();

/** A protobuf enum: an int32 type with names; JSON may hold the name or the number. */
function protoEnum(name: string, names: Record<number, string>): { type: GoType; decode: (raw: unknown) => unknown } {
  const numbers = new Map(Object.entries(names).map(([n, s]) => [s, Number(n)]));
  const type: GoType = {
    kind: 'int',
    name,
    stringer: (v) => names[v as number] ?? String(v),
    marshal: (v) => v,
  };
  type.methods = new Map([
    ['String', { params: [], call: (recv) => new Value(STRING, names[recv as number] ?? String(recv)) }],
  ]);
  return { type, decode: (raw) => (typeof raw === 'string' ? (numbers.get(raw) ?? 0) : (raw ?? 0)) };
}

const INTERCEPTION = protoEnum('v1alpha1.ProxyConfig_InboundInterceptionMode', {
  0: 'REDIRECT',
  1: 'TPROXY',
  2: 'NONE',
});
const AUTH_POLICY = protoEnum('v1alpha1.AuthenticationPolicy', { 0: 'NONE', 1: 'MUTUAL_TLS', 1000: 'INHERIT' });
const TLS_MODE = protoEnum('v1alpha3.ClientTLSSettings_TLSmode', {
  0: 'DISABLE',
  1: 'SIMPLE',
  2: 'MUTUAL',
  3: 'ISTIO_MUTUAL',
});

const CLIENT_TLS = ptrTo(
  protoMessage('v1alpha3.ClientTLSSettings', [
    { ...field('Mode', TLS_MODE.type), decode: TLS_MODE.decode },
    field('ClientCertificate', STRING),
    field('PrivateKey', STRING),
    field('CaCertificates', STRING),
    field('CredentialName', STRING),
    field('SubjectAltNames', SLICE_STRING),
    field('Sni', STRING),
    field('InsecureSkipVerify', BOOL_VALUE),
    field('CaCrl', STRING),
  ]),
);

const TRACING = ptrTo(
  protoMessage('v1alpha1.Tracing', [
    field('Zipkin', opaquePtr('v1alpha1.Tracing_Zipkin')),
    field('Lightstep', opaquePtr('v1alpha1.Tracing_Lightstep')),
    field('Datadog', opaquePtr('v1alpha1.Tracing_Datadog')),
    field('Stackdriver', opaquePtr('v1alpha1.Tracing_Stackdriver')),
    field('OpenCensusAgent', opaquePtr('v1alpha1.Tracing_OpenCensusAgent')),
    field('CustomTags', opaque('map[string]*v1alpha1.Tracing_CustomTag')),
    field('MaxPathTagLength', UINT32),
    field('Sampling', FLOAT64),
    field('TlsSettings', CLIENT_TLS),
  ]),
);

/** `*v1alpha1.ProxyConfig` (istio.io/api mesh/v1alpha1/proxy.proto), fields in declaration order. */
export const PROXY_CONFIG = ptrTo(
  protoMessage('v1alpha1.ProxyConfig', [
    field('ConfigPath', STRING),
    field('BinaryPath', STRING),
    field('ServiceCluster', STRING),
    field('DrainDuration', DURATION),
    field('DiscoveryAddress', STRING),
    field('ZipkinAddress', STRING),
    field('StatsdUdpAddress', STRING),
    field('EnvoyMetricsServiceAddress', STRING),
    field('ProxyAdminPort', INT32),
    field('AvailabilityZone', STRING),
    { ...field('ControlPlaneAuthPolicy', AUTH_POLICY.type), decode: AUTH_POLICY.decode },
    field('CustomConfigFile', STRING),
    field('StatNameLength', INT32),
    field('Concurrency', INT32_VALUE),
    field('ProxyBootstrapTemplatePath', STRING),
    { ...field('InterceptionMode', INTERCEPTION.type), decode: INTERCEPTION.decode },
    field('Tracing', TRACING),
    field('EnvoyAccessLogService', opaquePtr('v1alpha1.RemoteService')),
    field('EnvoyMetricsService', opaquePtr('v1alpha1.RemoteService')),
    field('ProxyMetadata', MAP_STRING),
    field('RuntimeValues', MAP_STRING),
    field('StatusPort', INT32),
    field('ExtraStatTags', SLICE_STRING),
    field('GatewayTopology', opaquePtr('v1alpha1.Topology')),
    field('TerminationDrainDuration', DURATION),
    field('MeshId', STRING),
    field('ReadinessProbe', opaquePtr('v1alpha3.ReadinessProbe')),
    field('ProxyStatsMatcher', opaquePtr('v1alpha1.ProxyConfig_ProxyStatsMatcher')),
    field('HoldApplicationUntilProxyStarts', BOOL_VALUE),
    field('CaCertificatesPem', SLICE_STRING),
    field('Image', opaquePtr('v1beta1.ProxyImage')),
    field('PrivateKeyProvider', opaquePtr('v1alpha1.PrivateKeyProvider')),
    field('ProxyHeaders', opaquePtr('v1alpha1.ProxyConfig_ProxyHeaders')),
    field('FileFlushInterval', DURATION),
    field('FileFlushMinSizeKb', UINT32_VALUE),
  ]),
);

/** `*v1alpha1.MeshConfig`: the fields templates read, and the commonly set ones. */
export const MESH_CONFIG = ptrTo(
  protoMessage('v1alpha1.MeshConfig', [
    field('ProxyListenPort', INT32),
    field('ProxyInboundListenPort', INT32),
    field('ProxyHttpPort', INT32),
    field('ConnectTimeout', DURATION),
    field('ProtocolDetectionTimeout', DURATION),
    field('IngressClass', STRING),
    field('IngressService', STRING),
    field('IngressSelector', STRING),
    field('EnableTracing', BOOL),
    field('AccessLogFile', STRING),
    field('AccessLogFormat', STRING),
    field('EnableEnvoyAccessLogService', BOOL),
    field('DisableEnvoyListenerLog', BOOL),
    field('DefaultConfig', PROXY_CONFIG),
    field('OutboundTrafficPolicy', opaquePtr('v1alpha1.MeshConfig_OutboundTrafficPolicy')),
    field('InboundTrafficPolicy', opaquePtr('v1alpha1.MeshConfig_InboundTrafficPolicy')),
    field('EnableAutoMtls', BOOL_VALUE),
    field('TrustDomain', STRING),
    field('TrustDomainAliases', SLICE_STRING),
    field('DefaultServiceExportTo', SLICE_STRING),
    field('DefaultVirtualServiceExportTo', SLICE_STRING),
    field('DefaultDestinationRuleExportTo', SLICE_STRING),
    field('RootNamespace', STRING),
    field('DnsRefreshRate', DURATION),
    field('InboundClusterStatName', STRING),
    field('OutboundClusterStatName', STRING),
    field('EnablePrometheusMerge', BOOL_VALUE),
    field('VerifyCertificateAtClient', BOOL_VALUE),
    field('ExtensionProviders', opaqueList('*v1alpha1.MeshConfig_ExtensionProvider')),
    field('DefaultProviders', opaquePtr('v1alpha1.MeshConfig_DefaultProviders')),
    field('DiscoverySelectors', opaqueList('*v1.LabelSelector')),
  ]),
);

const CONTAINER_PORT = structType('v1.ContainerPort', [
  field('Name', STRING),
  field('HostPort', INT32),
  field('ContainerPort', INT32, 'containerPort', false),
  field('Protocol', named('v1.Protocol')),
  field('HostIP', STRING, 'hostIP'),
]);

/** `corev1.Container` (k8s.io/api core/v1), fields in declaration order. */
export const CONTAINER = structType('v1.Container', [
  field('Name', STRING, 'name', false),
  field('Image', STRING),
  field('Command', SLICE_STRING),
  field('Args', SLICE_STRING),
  field('WorkingDir', STRING),
  field('Ports', sliceOf(CONTAINER_PORT)),
  field('EnvFrom', opaqueList('v1.EnvFromSource')),
  field('Env', opaqueList('v1.EnvVar')),
  field('Resources', opaque('v1.ResourceRequirements')),
  field('ResizePolicy', opaqueList('v1.ContainerResizePolicy')),
  field('RestartPolicy', ptrTo(named('v1.ContainerRestartPolicy'))),
  field('VolumeMounts', opaqueList('v1.VolumeMount')),
  field('VolumeDevices', opaqueList('v1.VolumeDevice')),
  field('LivenessProbe', opaquePtr('v1.Probe')),
  field('ReadinessProbe', opaquePtr('v1.Probe')),
  field('StartupProbe', opaquePtr('v1.Probe')),
  field('Lifecycle', opaquePtr('v1.Lifecycle')),
  field('TerminationMessagePath', STRING),
  field('TerminationMessagePolicy', named('v1.TerminationMessagePolicy')),
  field('ImagePullPolicy', named('v1.PullPolicy')),
  field('SecurityContext', opaquePtr('v1.SecurityContext')),
  field('Stdin', BOOL),
  field('StdinOnce', BOOL),
  field('TTY', BOOL, 'tty'),
]);

/** `corev1.PodSpec`. */
export const POD_SPEC = structType('v1.PodSpec', [
  field('Volumes', opaqueList('v1.Volume')),
  field('InitContainers', sliceOf(CONTAINER)),
  field('Containers', sliceOf(CONTAINER), 'containers', false),
  field('EphemeralContainers', opaqueList('v1.EphemeralContainer')),
  field('RestartPolicy', named('v1.RestartPolicy')),
  field('TerminationGracePeriodSeconds', INT64_PTR),
  field('ActiveDeadlineSeconds', INT64_PTR),
  field('DNSPolicy', named('v1.DNSPolicy'), 'dnsPolicy'),
  field('NodeSelector', MAP_STRING),
  field('ServiceAccountName', STRING),
  field('DeprecatedServiceAccount', STRING, 'serviceAccount'),
  field('AutomountServiceAccountToken', BOOL_PTR),
  field('NodeName', STRING),
  field('HostNetwork', BOOL),
  field('HostPID', BOOL, 'hostPID'),
  field('HostIPC', BOOL, 'hostIPC'),
  field('ShareProcessNamespace', BOOL_PTR),
  field('SecurityContext', opaquePtr('v1.PodSecurityContext')),
  field('ImagePullSecrets', opaqueList('v1.LocalObjectReference')),
  field('Hostname', STRING),
  field('Subdomain', STRING),
  field('Affinity', opaquePtr('v1.Affinity')),
  field('SchedulerName', STRING),
  field('Tolerations', opaqueList('v1.Toleration')),
  field('HostAliases', opaqueList('v1.HostAlias')),
  field('PriorityClassName', STRING),
  field('Priority', INT32_PTR),
  field('DNSConfig', opaquePtr('v1.PodDNSConfig'), 'dnsConfig'),
  field('ReadinessGates', opaqueList('v1.PodReadinessGate')),
  field('RuntimeClassName', STRING_PTR),
  field('EnableServiceLinks', BOOL_PTR),
  field('PreemptionPolicy', ptrTo(named('v1.PreemptionPolicy'))),
  field('Overhead', opaque('v1.ResourceList')),
  field('TopologySpreadConstraints', opaqueList('v1.TopologySpreadConstraint')),
  field('SetHostnameAsFQDN', BOOL_PTR, 'setHostnameAsFQDN'),
  field('OS', opaquePtr('v1.PodOS'), 'os'),
  field('HostUsers', BOOL_PTR),
  field('SchedulingGates', opaqueList('v1.PodSchedulingGate')),
  field('ResourceClaims', opaqueList('v1.PodResourceClaim')),
]);

/** `metav1.ObjectMeta`. */
export const OBJECT_META = structType('v1.ObjectMeta', [
  field('Name', STRING),
  field('GenerateName', STRING),
  field('Namespace', STRING),
  field('SelfLink', STRING),
  field('UID', named('types.UID'), 'uid'),
  field('ResourceVersion', STRING),
  field('Generation', INT64),
  field('CreationTimestamp', opaque('v1.Time')),
  field('DeletionTimestamp', opaquePtr('v1.Time')),
  field('DeletionGracePeriodSeconds', INT64_PTR),
  field('Labels', MAP_STRING),
  field('Annotations', MAP_STRING),
  field('OwnerReferences', opaqueList('v1.OwnerReference')),
  field('Finalizers', SLICE_STRING),
  field('ManagedFields', opaqueList('v1.ManagedFieldsEntry')),
]);

const TYPE_META = structType('v1.TypeMeta', [field('Kind', STRING), field('APIVersion', STRING, 'apiVersion')]);
const NAMESPACED_NAME = structType('types.NamespacedName', [
  field('Namespace', STRING, 'Namespace', false),
  field('Name', STRING, 'Name', false),
]);

/** `*inject.SidecarTemplateData` (the superset of the fields of Istio 1.18–1.31). */
export const SIDECAR_TEMPLATE_DATA = ptrTo(
  structType('inject.SidecarTemplateData', [
    field('TypeMeta', TYPE_META, 'TypeMeta', false),
    field('DeploymentMeta', NAMESPACED_NAME, 'DeploymentMeta', false),
    field('ObjectMeta', OBJECT_META, 'ObjectMeta', false),
    field('Spec', POD_SPEC, 'Spec', false),
    field('ProxyConfig', PROXY_CONFIG, 'ProxyConfig', false),
    field('MeshConfig', MESH_CONFIG, 'MeshConfig', false),
    field('Values', MAP_ANY, 'Values', false),
    field('Revision', STRING, 'Revision', false),
    field('NativeSidecars', BOOL, 'NativeSidecars', false),
    field('ProxyImage', STRING, 'ProxyImage', false),
    field('ProxyInitImage', STRING, 'ProxyInitImage', false),
    field('ProxyUID', INT64, 'ProxyUID', false),
    field('ProxyGID', INT64, 'ProxyGID', false),
    field('InboundTrafficPolicyMode', STRING, 'InboundTrafficPolicyMode', false),
    field('CompliancePolicy', STRING, 'CompliancePolicy', false),
  ]),
);

/** Inputs of {@link sidecarTemplateData}: JSON as Kubernetes and protojson write it. */
export interface SidecarTemplateInput {
  typeMeta: { kind: string; apiVersion: string };
  deploymentMeta: { name: string; namespace: string };
  /** The pod template after `stripPod`/`reinsertOverrides`. */
  pod: PodTemplate;
  proxyConfig: JsonObject;
  meshConfig: JsonObject;
  values: JsonObject;
  revision: string;
  nativeSidecars: boolean;
  proxyImage: string;
  /** Istio 1.31+ `ProxyInitImage`: `global.proxy_init.image` on the hub and tag, image type from variant or annotation. */
  proxyInitImage: string;
  proxyUID: number;
  proxyGID: number;
  inboundTrafficPolicyMode: string;
  compliancePolicy: string;
}

/** Builds the Go-typed template data (Istio `RunTemplate`'s `SidecarTemplateData`, passed as a pointer). */
export function sidecarTemplateData(input: SidecarTemplateInput): Value {
  return sidecarTemplateValue(sidecarTemplateFields(input));
}

/** The Go-typed template data over its fields (see `sidecarTemplateFields`). */
export function sidecarTemplateValue(fields: Record<string, unknown>): Value {
  return new Value(SIDECAR_TEMPLATE_DATA, fields);
}

/**
 * The fields of `SidecarTemplateData` by Go name (`TypeMeta`, `DeploymentMeta: {Name, Namespace}`, `ObjectMeta`,
 * `Spec`, ...), as JSON: what sidecar plans key and fill (`src/render/plans.ts`).
 */
export function sidecarTemplateFields(input: SidecarTemplateInput): Record<string, unknown> {
  return {
    TypeMeta: input.typeMeta,
    DeploymentMeta: { Name: input.deploymentMeta.name, Namespace: input.deploymentMeta.namespace },
    ObjectMeta: input.pod.metadata,
    Spec: input.pod.spec,
    ProxyConfig: input.proxyConfig,
    MeshConfig: input.meshConfig,
    Values: input.values,
    Revision: input.revision,
    NativeSidecars: input.nativeSidecars,
    ProxyImage: input.proxyImage,
    ProxyInitImage: input.proxyInitImage,
    ProxyUID: input.proxyUID,
    ProxyGID: input.proxyGID,
    InboundTrafficPolicyMode: input.inboundTrafficPolicyMode,
    CompliancePolicy: input.compliancePolicy,
  };
}

/** Types the Istio functions take (`includeInboundPorts []corev1.Container`, `annotation metav1.ObjectMeta`). */
export const ISTIO_TYPES = { CONTAINERS: sliceOf(CONTAINER), OBJECT_META, DURATION, PROXY_CONFIG };
