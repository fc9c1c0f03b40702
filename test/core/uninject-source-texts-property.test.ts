/**
 * The text of a node the injection replaced or removed comes back as the user wrote it (issue #37 item 3), for
 * every driver: generated Deployments whose pod template the injection rewrites (probes of every handler,
 * `httpGet`, `tcpSocket`, `grpc`, `exec`, with ports by number or by name), written with double- and
 * single-quoted scalars, comments on a value's line and on lines of their own inside probes, containers and
 * labels, flow maps (a handler, the resources, the labels), an anchored labels map that the pod template takes by
 * alias (`labels: *labels`) and an anchored container. Inject, then uninject, through `run` as the CLI runs it:
 * the output is the input, byte for byte (fixed seed, test/setup/property-seed.mjs). Mutation-checked: without the
 * companion record's `texts` (src/edit/source-texts.ts returning none) every driver that rewrites a probe or adds
 * a pod label fails.
 */
import t from 'tap';
import fc from 'fast-check';
import { roundTripEveryDriver } from '../helpers/round-trip-drivers.ts';

type Lines = string[];

/** A string scalar written plain, double-quoted or single-quoted. */
const written = (v: string) => fc.constantFrom(v, `"${v}"`, `'${v}'`);
/** A comment on a value's line, or none. */
const trailing = fc.constantFrom('', '', ' # note');
/** A port: a number, or the name of a port the container declares (plain or quoted). */
const port = fc.oneof(fc.constantFrom('8080', '9090'), written('http'), written('grpc-port'));

/** A probe handler as `[handler key, its lines at the handler's indent, or its flow map]`. */
const handler: fc.Arbitrary<[string, Lines | string]> = fc.oneof(
  fc
    .record({
      port,
      path: fc.option(written('/healthz'), { nil: undefined }),
      scheme: fc.option(fc.constantFrom('HTTP', 'HTTPS', '"HTTP"'), { nil: undefined }),
      header: fc.option(written('kubelet'), { nil: undefined }),
      note: trailing,
      own: fc.boolean(),
      flow: fc.boolean(),
    })
    .map((h): [string, Lines | string] => {
      if (h.flow) return ['httpGet', `{${h.path === undefined ? '' : `path: ${h.path}, `}port: ${h.port}}`];
      const lines: Lines = [];
      if (h.own) lines.push('# where the kubelet asks');
      if (h.path !== undefined) lines.push(`path: ${h.path}${h.note}`);
      lines.push(`port: ${h.port}`);
      if (h.scheme !== undefined) lines.push(`scheme: ${h.scheme}${h.note}`);
      if (h.header !== undefined) lines.push('httpHeaders:', '- name: X-Probe', `  value: ${h.header}`);
      return ['httpGet', lines];
    }),
  // A flow map on one line of plain scalars (`tcpSocket: {port: 8080}`): a mesh that rewrites the probe to
  // another handler removes it, and uninject writes it anew unless the record keeps its text.
  fc
    .tuple(port, trailing, fc.boolean())
    .map(([p, note, flow]): [string, Lines | string] =>
      flow ? ['tcpSocket', `{port: ${p}}`] : ['tcpSocket', [`port: ${p}${note}`]],
    ),
  fc
    .tuple(
      fc.constantFrom('8080', '9090'),
      fc.option(written('/startup'), { nil: undefined }),
      trailing,
      fc.boolean(),
      fc.boolean(),
    )
    .map(([p, service, note, first, flow]): [string, Lines | string] => {
      if (flow) return ['grpc', `{${service === undefined ? '' : `service: ${service}, `}port: ${p}}`];
      const lines = [`port: ${p}${note}`];
      if (service !== undefined) (first ? lines.unshift : lines.push).call(lines, `service: ${service}${note}`);
      return ['grpc', lines];
    }),
  fc.constantFrom<[string, Lines | string]>(
    ['exec', ['command: [cat, "/tmp/ready"]']],
    ['exec', '{command: [cat, /tmp/ready]}'],
    ['exec', ['command:', "- 'cat'", '- /tmp/ready # the file']],
  ),
);

/** A probe: its handler (block or flow) and settings, a comment of its own or not. */
const probe: fc.Arbitrary<Lines> = fc
  .tuple(handler, fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }), fc.boolean(), fc.boolean())
  .map(([[key, body], timeout, handlerLast, own]) => {
    const settings: Lines = [];
    if (own) settings.push('# settings');
    if (timeout !== undefined) settings.push(`timeoutSeconds: ${timeout}`);
    settings.push('periodSeconds: 10');
    const h = typeof body === 'string' ? [`${key}: ${body}`] : [`${key}:`, ...body.map((l) => `  ${l}`)];
    return handlerLast ? [...settings, ...h] : [...h, ...settings];
  });

const container = (name: string, anchored: boolean) =>
  fc
    .record({
      liveness: fc.option(probe, { nil: undefined }),
      readiness: fc.option(probe, { nil: undefined }),
      startup: fc.option(probe, { nil: undefined }),
      image: written(`example/${name}:1.0`),
      note: trailing,
      flowResources: fc.boolean(),
    })
    .map((c) => {
      const lines: Lines = [`- ${anchored ? '&main\n  ' : ''}name: ${name}`, `  image: ${c.image}${c.note}`];
      lines.push('  # the ports the probes name', '  ports:', '  - name: http', '    containerPort: 8080');
      lines.push('  - name: grpc-port', '    containerPort: 9090');
      for (const [k, p] of [
        ['livenessProbe', c.liveness],
        ['readinessProbe', c.readiness],
        ['startupProbe', c.startup],
      ] as const)
        if (p) lines.push(`  ${k}:`, ...p.map((l) => `    ${l}`));
      lines.push(c.flowResources ? '  resources: {requests: {cpu: "10m"}}' : '  resources:\n    limits:\n      cpu: 1');
      return lines.join('\n').split('\n');
    });

const deployment = fc
  .record({
    labels: fc.constantFrom('alias', 'flow', 'block'),
    quotedLabel: written('front'),
    labelNote: trailing,
    second: fc.boolean(),
    anchored: fc.boolean(),
    web: fc.boolean(),
  })
  .chain((d) =>
    fc.tuple(fc.constant(d), container('web', d.anchored), container('worker', false)).map(([d, web, worker]) => {
      const own = [`app: web${d.labelNote}`, `tier: ${d.quotedLabel}`];
      const top = d.labels === 'alias' ? ['  labels: &labels', ...own.map((l) => `    ${l}`)] : [];
      const labels =
        d.labels === 'alias'
          ? ['      labels: *labels']
          : d.labels === 'flow'
            ? [`      labels: {app: web, tier: ${d.quotedLabel}}`]
            : ['      labels:', '        # who serves', ...own.map((l) => `        ${l}`)];
      return [
        'apiVersion: apps/v1',
        'kind: Deployment',
        'metadata:',
        '  name: web',
        '  namespace: shop',
        ...top,
        'spec:',
        '  selector:',
        '    matchLabels:',
        '      app: web',
        '  template:',
        '    metadata:',
        ...labels,
        '    spec:',
        '      containers:',
        ...web.map((l) => `      ${l}`),
        ...(d.second ? worker.map((l) => `      ${l}`) : []),
        '',
      ].join('\n');
    }),
  );

roundTripEveryDriver(t, 'the text of what the injection replaced comes back byte for byte', deployment);
