/**
 * The functions Istio's injector gives its Go templates: Sprig's `TxtFuncMap` overlaid with Istio's
 * `InjectionFuncmap` (pkg/kube/inject/template.go, 1.18–1.31; `toJson` only before 1.19, `mergeMaps` from 1.21,
 * `omitNil` and `otelResourceAttributes` from 1.30), written from their Go behaviour. {@link INJECTION_FUNCS_SINCE}
 * lists which release added which member. Pure: `env` answers from an allow-list given by the caller, never from the
 * process environment.
 */
import { toYamlText } from '../../render/template-functions.ts';
import { assignOwn, setOwn } from '../../json.ts';
import { BudgetExceeded, checkIndent, spendWork } from '../../render/budget.ts';
import { formatGoDuration } from '../../render/go-values.ts';
import type { FuncMap } from '../../render/gotemplate/index.ts';
import { SPRIG_FUNCS, goTrimSpace } from '../../render/gotemplate/sprig.ts';
import { sprint } from '../../render/gotemplate/fmt.ts';
import {
  ANY,
  FALSE,
  type GoFunc,
  type GoType,
  INT,
  MAP_STRING,
  NIL,
  STRING,
  TRUE,
  Value,
  dynamic,
  fieldOf,
  goFunc,
  goJSON,
  toJSONValue,
} from '../../render/gotemplate/value.ts';
import { proxyConfigToJSON } from './proxy-config.ts';
import { appendMultusNetworkTo } from './template-functions.ts';
import { ISTIO_TYPES, MESH_CONFIG } from './go-model.ts';
import { goOmitNil, goOtelResourceAttributes, otelPlanRule } from './go-funcs-130.ts';
import { defined } from '../../checked.ts';

const str = (s: string): Value => new Value(STRING, s);
const bool = (b: boolean): Value => (b ? TRUE : FALSE);

/** `proto.Message`: any pointer to a protobuf message type. */
const PROTO_MESSAGE: GoType = {
  kind: 'interface',
  name: 'protoreflect.ProtoMessage',
  implementedBy: (t) => t.kind === 'ptr' && t.elem?.noPrint === true,
};

function stringMap(v: Value): Record<string, string> {
  return (v.v as Record<string, string> | null) ?? {};
}

function mapValue(o: Record<string, string> | null): Value {
  return new Value(MAP_STRING, o);
}

/** Go `json.Marshal` of a map[string]string (sorted keys); nil → `null`. */
function stringMapJSON(o: Record<string, string> | null): string {
  if (o === null) return 'null';
  const sorted: Record<string, string> = {};
  for (const k of Object.keys(o).sort()) setOwn(sorted, k, o[k] as string);
  return goJSON(sorted);
}

function containerPorts(containers: Value, include: (name: string) => boolean): string {
  const parts: string[] = [];
  for (const c of (containers.v as Array<Record<string, unknown>> | null) ?? []) {
    if (!include(String(c.name ?? ''))) continue;
    for (const p of (c.ports as Array<Record<string, unknown>> | undefined) ?? []) {
      if (p.protocol === 'UDP' || p.protocol === 'SCTP') continue;
      parts.push(String(Math.trunc(Number(p.containerPort ?? 0))));
    }
  }
  return parts.join(',');
}

function excludeInboundPort(port: Value, list: string): string {
  const portStr = goTrimSpace(
    port.t.kind === 'invalid' || (port.t === ANY && port.v === null) ? '<nil>' : sprint([port]),
  );
  if (portStr === '' || portStr === '0') return list;
  const out: string[] = [];
  for (const p of list.split(',')) {
    if (p === portStr) return list;
    const t = p.trim();
    if (t !== '') out.push(t);
  }
  out.push(portStr);
  return out.join(',');
}

/** Options of {@link istioFuncMap}. */
export interface IstioFuncOptions {
  /** Istio minor version of the templates (e.g. 26 for 1.26.x); selects `appendMultusNetwork` and `toJson`. */
  minor: number;
  /** What `env KEY DEFAULT` sees: only these variables exist; any other reads as unset (→ DEFAULT). */
  env: Readonly<Record<string, string>>;
}

/**
 * Sprig's text functions overlaid with Istio's `InjectionFuncmap` for one Istio version.
 *
 * Long by design: table (Istio `InjectionFuncmap`, one entry per function).
 */
export function istioFuncMap(opts: IstioFuncOptions): FuncMap {
  const m = new Map<string, GoFunc>(SPRIG_FUNCS);
  const { CONTAINERS, OBJECT_META, DURATION } = ISTIO_TYPES;
  const annotationsField = defined(
    OBJECT_META.fieldIndex?.get('Annotations'),
    'the Annotations field of v1.ObjectMeta',
  );
  const toJSON = goFunc([MAP_STRING], (v) => str(v.v === null ? '{}' : stringMapJSON(stringMap(v))));
  const istio: Array<[string, GoFunc]> = [
    ['formatDuration', goFunc([DURATION], (d) => str(d.v === null ? '0s' : formatGoDuration(d.v)))],
    ['isset', goFunc([MAP_STRING, STRING], (mv, k) => bool(mv.v !== null && Object.hasOwn(mv.v, k.v as string)))],
    ['excludeInboundPort', goFunc([ANY, STRING], (p, l) => str(excludeInboundPort(p, l.v as string)))],
    ['includeInboundPorts', goFunc([CONTAINERS], (c) => str(containerPorts(c, () => true)))],
    ['applicationPorts', goFunc([CONTAINERS], (c) => str(containerPorts(c, (n) => n !== 'istio-proxy')))],
    ['kubevirtInterfaces', goFunc([STRING], (s) => s)],
    ['excludeInterfaces', goFunc([STRING], (s) => s)],
    [
      'annotation',
      goFunc([OBJECT_META, STRING, ANY], (meta, name, def) => {
        const annos = fieldOf(meta.v, annotationsField).v as Record<string, string> | null;
        const key = name.v as string;
        if (annos && Object.hasOwn(annos, key)) return str(annos[key] ?? '');
        return str(def.t === ANY && def.v === null ? '<nil>' : sprint([def]));
      }),
    ],
    [
      'valueOrDefault',
      goFunc([ANY, ANY], (v, d) => ((v.t === ANY && v.v === null) || (v.t === STRING && v.v === '') ? d : v)),
    ],
    ['toJSON', toJSON],
    [
      'fromJSON',
      goFunc([STRING], (s) => {
        try {
          return dynamic(JSON.parse(s.v as string));
        } catch {
          return str('{}');
        }
      }),
    ],
    [
      'structToJSON',
      goFunc([ANY], (v) => {
        if (v.t === ANY && v.v === null) return str('{}');
        try {
          return str(goJSON(toJSONValue(v)));
        } catch (e) {
          if (e instanceof BudgetExceeded) throw e;
          return str('{}');
        }
      }),
    ],
    [
      'protoToJSON',
      goFunc([PROTO_MESSAGE], (v) => {
        if (v.v === null) return str('{}');
        if (v.t !== ISTIO_TYPES.PROXY_CONFIG) return str(goJSON(toJSONValue(v)));
        return str(proxyConfigToJSON(v.v as JsonObjectLike));
      }),
    ],
    ['toYaml', goFunc([ANY], (v) => str(toYamlText(toJSONValue(v.t === ANY && v.v === null ? NIL : v))))],
    [
      'indent',
      goFunc([INT, STRING], (n, s) => {
        checkIndent(n.v, s.v as string);
        const pad = ' '.repeat(Math.max(0, n.v as number));
        return str(
          (s.v as string)
            .split('\n')
            .map((line, i) => (i > 0 ? pad + line : line))
            .join('\n'),
        );
      }),
    ],
    [
      'directory',
      goFunc([STRING], (p) => {
        const s = p.v as string;
        return str(s.slice(0, s.lastIndexOf('/') + 1));
      }),
    ],
    ['contains', goFunc([STRING, STRING], (needle, hay) => bool((hay.v as string).includes(needle.v as string)))],
    ['toLower', goFunc([STRING], (s) => str((s.v as string).toLowerCase()))],
    [
      'appendMultusNetwork',
      goFunc([STRING, STRING], (e, n) => str(appendMultusNetworkTo(e.v as string, n.v as string, opts.minor >= 26))),
    ],
    [
      'env',
      goFunc([STRING, STRING], (k, d) => {
        const v = Object.hasOwn(opts.env, k.v as string) ? opts.env[k.v as string] : undefined;
        return v === undefined || v === '' ? d : str(v);
      }),
    ],
    [
      'omit',
      goFunc(
        [MAP_STRING, STRING],
        (mv, ...keys) => {
          const drop = new Set(keys.map((k) => k.v as string));
          const out: Record<string, string> = {};
          const entries = Object.entries(stringMap(mv));
          spendWork(entries.length);
          for (const [k, v] of entries) if (!drop.has(k)) out[k] = v;
          return mapValue(out);
        },
        true,
      ),
    ],
    [
      'strdict',
      goFunc(
        [STRING],
        (...vs) => {
          const out: Record<string, string> = {};
          for (let i = 0; i < vs.length; i += 2)
            setOwn(out, vs[i]?.v as string, i + 1 < vs.length ? (vs[i + 1]?.v as string) : '');
          return mapValue(out);
        },
        true,
      ),
    ],
    ['toJsonMap', goFunc([MAP_STRING], (...maps) => str(stringMapJSON(mergeMaps(maps))), true)],
  ];
  if (opts.minor < 19) istio.push(['toJson', toJSON]);
  if (opts.minor >= 21) istio.push(['mergeMaps', goFunc([MAP_STRING], (...maps) => mapValue(mergeMaps(maps)), true)]);
  if (opts.minor >= 30) {
    istio.push(['omitNil', goFunc([ANY], goOmitNil)]);
    const otel = goFunc([MESH_CONFIG, MAP_STRING, MAP_STRING, STRING, CONTAINERS], goOtelResourceAttributes);
    istio.push(['otelResourceAttributes', { ...otel, plan: otelPlanRule }]);
  }
  for (const [name, f] of istio) m.set(name, f);
  return m;
}

/**
 * The members of Istio's `InjectionFuncmap` (pkg/kube/inject/template.go) and the first minor release that has each
 * (read from template.go at every tag from 1.18 to 1.31.0-rc.0); `toJson` was removed in 1.19. A template of
 * release 1.N may call a member only when `since <= N` (and `until`, when set, is above N).
 */
export const INJECTION_FUNCS_SINCE: Readonly<Record<string, { since: number; until?: number }>> = {
  formatDuration: { since: 18 },
  isset: { since: 18 },
  excludeInboundPort: { since: 18 },
  includeInboundPorts: { since: 18 },
  kubevirtInterfaces: { since: 18 },
  excludeInterfaces: { since: 18 },
  applicationPorts: { since: 18 },
  annotation: { since: 18 },
  valueOrDefault: { since: 18 },
  toJSON: { since: 18 },
  fromJSON: { since: 18 },
  structToJSON: { since: 18 },
  protoToJSON: { since: 18 },
  toYaml: { since: 18 },
  indent: { since: 18 },
  directory: { since: 18 },
  contains: { since: 18 },
  toLower: { since: 18 },
  appendMultusNetwork: { since: 18 },
  env: { since: 18 },
  omit: { since: 18 },
  strdict: { since: 18 },
  toJsonMap: { since: 18 },
  toJson: { since: 18, until: 19 },
  mergeMaps: { since: 21 },
  omitNil: { since: 30 },
  otelResourceAttributes: { since: 30 },
};

type JsonObjectLike = Parameters<typeof proxyConfigToJSON>[0];

function mergeMaps(maps: Value[]): Record<string, string> | null {
  if (maps.length === 0) return null;
  const out: Record<string, string> = {};
  for (const mv of maps) {
    const m = stringMap(mv);
    spendWork(Object.keys(m).length);
    assignOwn(out, m);
  }
  return out;
}
