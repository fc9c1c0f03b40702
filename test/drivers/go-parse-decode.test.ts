// Config values decoded as the webhooks decode them (issue #37 item 4, the sites that were left for later): kuma-cp's
// config (sigs.k8s.io/yaml with YAML 1.1 scalars, then encoding/json into typed fields), Linkerd's chart values
// (encoding/json into values.go's types), Istio's proxy config and values (jsonpb), OpenShift's namespace ranges
// (fmt.Sscanf "%d/%d" into uint32) and Linkerd's clusterNetworks (net.ParseCIDR). Tables from Go's documented
// behaviour, then one generator of spellings across every site against a reference written from that behaviour.
import t from 'tap';
import fc from 'fast-check';
import { decodeJsonBool, decodeJsonInt, decodeJsonpbInt } from '../../src/drivers/go-parse-decode.ts';
import { scanTwoUint32 } from '../../src/drivers/go-parse-scan.ts';
import { parseCIDR } from '../../src/drivers/go-parse.ts';
import { openshiftProxyIds } from '../../src/drivers/istio/template-data.ts';
import { loadConfig } from '../helpers/config.ts';
import { runCli } from '../helpers/e2e.ts';

t.test('encoding/json into typed fields: integers in range, no strings, bools only true/false', async (t) => {
  const rows: Array<[unknown, Parameters<typeof decodeJsonInt>[1], number | string]> = [
    [9000, 'uint32', 9000],
    [4294967295, 'uint32', 4294967295],
    [4294967296, 'uint32', 'json: cannot unmarshal number 4294967296 into Go struct field f of type uint32'],
    [-1, 'uint32', 'json: cannot unmarshal number -1 into Go struct field f of type uint32'],
    [2147483647, 'int32', 2147483647],
    [2147483648, 'int32', 'json: cannot unmarshal number 2147483648 into Go struct field f of type int32'],
    [-2147483648, 'int32', -2147483648],
    [1.5, 'int', 'json: cannot unmarshal number 1.5 into Go struct field f of type int'],
    [1e21, 'uint64', 'json: cannot unmarshal number 1e+21 into Go struct field f of type uint64'],
    ['9000', 'uint32', 'json: cannot unmarshal string into Go struct field f of type uint32'],
    [true, 'int64', 'json: cannot unmarshal bool into Go struct field f of type int64'],
    [[1], 'int64', 'json: cannot unmarshal array into Go struct field f of type int64'],
  ];
  for (const [v, type, want] of rows) {
    const got = decodeJsonInt(v as never, type, 'f');
    t.same(got, typeof want === 'number' ? { ok: true, value: want } : { ok: false, error: want }, `${v} → ${type}`);
  }
  t.equal(decodeJsonInt(null, 'uint32', 'f'), undefined, 'null leaves the field as it was');
  t.same(decodeJsonBool(true, 'f'), { ok: true, value: true });
  for (const v of ['true', 'yes', 1, 0])
    t.match(decodeJsonBool(v, 'f'), {
      ok: false,
      error: /cannot unmarshal (string|number .*) into Go struct field f of type bool/,
    });
});

t.test('jsonpb into int32: a number, or a string holding a JSON integer (trimQuote)', async (t) => {
  const rows: Array<[unknown, number | RegExp]> = [
    [15020, 15020],
    ['15020', 15020],
    [' 15020 ', 15020],
    ['-1', -1],
    ['+1', /^invalid character '\+' looking for beginning of value$/],
    ['015', /^invalid character '1' after top-level value$/],
    ['0x10', /^invalid character 'x' after top-level value$/],
    ['1_000', /^invalid character '_' after top-level value$/],
    ['1e3', /^json: cannot unmarshal number 1e3 into Go value of type int32$/],
    ['1.5', /^json: cannot unmarshal number 1.5 into Go value of type int32$/],
    ['2147483648', /^json: cannot unmarshal number 2147483648 into Go value of type int32$/],
    ['', /^unexpected end of JSON input$/],
    ['-', /^unexpected end of JSON input$/],
    ['1.', /^unexpected end of JSON input$/],
    ['\t1', /^invalid character/],
    [1.5, /cannot unmarshal number 1.5/],
  ];
  for (const [v, want] of rows) {
    const got = decodeJsonpbInt(v as never, 'int32', 'statusPort');
    if (typeof want === 'number') t.same(got, { ok: true, value: want }, JSON.stringify(v));
    else t.match(got, { ok: false, error: want }, JSON.stringify(v));
  }
});

t.test('fmt.Sscanf("%d/%d") into uint32 and the UID/GID Istio takes on OpenShift', async (t) => {
  t.same(scanTwoUint32('1000/10', '/'), { ok: true, value: [1000, 10] });
  t.same(scanTwoUint32(' 1000/ 10trailing', '/'), { ok: true, value: [1000, 10] }, 'blanks skipped, rest ignored');
  t.same(scanTwoUint32('007/08', '/'), { ok: true, value: [7, 8] }, 'leading zeros are decimal');
  for (const [s, error] of [
    ['+1000/10', 'expected integer'],
    ['1000 /10', 'input does not match format'],
    ['1000', 'unexpected EOF'],
    ['', 'EOF'],
    ['4294967296/1', 'unsigned integer overflow on token 4294967296'],
    ['1/\n2', 'unexpected newline'],
  ] as const)
    t.same(scanTwoUint32(s, '/'), { ok: false, error }, JSON.stringify(s));
  const U = 'openshift.io/sa.scc.uid-range';
  const G = 'openshift.io/sa.scc.supplemental-groups';
  t.same(openshiftProxyIds({ [U]: '0/0' }, 1337), { uid: 4294967295, gid: 4294967295 }, 'start+size-1 wraps as uint32');
  t.same(openshiftProxyIds({ [U]: '1000/10,x' }, 1337), { uid: 1009, gid: 1337 }, 'UID parsed whole; GID blocks all');
  t.same(openshiftProxyIds({ [U]: '-5/10', [G]: '5-9,20/5' }, 1337), { uid: 1337, gid: 9 });
  t.same(openshiftProxyIds({ [U]: '5/4294967295' }, 1337).uid, 3, 'overflow wraps');
});

t.test('net.ParseCIDR', async (t) => {
  for (const s of ['10.0.0.0/8', 'fd00::/8', '::ffff:10.0.0.0/104', '10.0.0.0/008'])
    t.same(parseCIDR(s), { ok: true, value: s });
  for (const s of [
    '',
    '10.0.0.0',
    '10.0.0.0/33',
    '999.0.0.0/8',
    '10.0.0/8',
    ' 10.0.0.0/8',
    '10.0.0.0/8 ',
    'fe80::1%eth0/64',
  ])
    t.same(parseCIDR(s), { ok: false, error: `invalid CIDR address: ${s}` }, JSON.stringify(s));
});

const kumaConfig = (injector: Record<string, unknown> | string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'meshinject.dev/v1alpha1',
  kind: 'SidecarInjection',
  spec: {
    mesh: 'kuma',
    kuma: {
      controlPlaneConfig: typeof injector === 'string' ? injector : { runtime: { kubernetes: { injector } }, ...extra },
    },
  },
});
const issuesOf = (fc: unknown): string[] => {
  const r = loadConfig(fc);
  return r.ok ? [] : r.issues.map((i) => i.message);
};

t.test('kuma-cp config: fields decoded as config.Load decodes them', async (t) => {
  const P = 'spec.kuma.controlPlaneConfig.runtime.kubernetes.injector';
  t.same(issuesOf(kumaConfig({ applicationProbeProxyPort: 9000, cniEnabled: true })), []);
  t.same(issuesOf(kumaConfig({ applicationProbeProxyPort: '9000' })), [
    `${P}.applicationProbeProxyPort: json: cannot unmarshal string into Go struct field applicationProbeProxyPort of type uint32`,
  ]);
  t.same(issuesOf(kumaConfig({ cniEnabled: 'true' })), [
    `${P}.cniEnabled: json: cannot unmarshal string into Go struct field cniEnabled of type bool`,
  ]);
  t.same(issuesOf(kumaConfig({ sidecarContainer: { redirectPortInbound: 65536 } })), [
    `${P}.sidecarContainer.redirectPortInbound: .RedirectPortInbound must be in the range [0, 65535]`,
  ]);
  t.same(issuesOf(kumaConfig({ sidecarContainer: { readinessProbe: { periodSeconds: 2147483648 } } })), [
    `${P}.sidecarContainer.readinessProbe.periodSeconds: json: cannot unmarshal number 2147483648 into Go struct field sidecarContainer.readinessProbe.periodSeconds of type int32`,
  ]);
  t.same(issuesOf(kumaConfig({ sidecarTraffic: { excludeInboundPorts: '80,443' } })), [
    `${P}.sidecarTraffic.excludeInboundPorts: json: cannot unmarshal string into Go struct field sidecarTraffic.excludeInboundPorts of type []uint32`,
  ]);
  t.same(issuesOf(kumaConfig({}, { bootstrapServer: { params: { adminPort: 70000 } } })), [
    'spec.kuma.controlPlaneConfig.bootstrapServer.params.adminPort: AdminPort must be in the range [0, 65535]',
  ]);
  // YAML text is read with go-yaml v2's YAML 1.1 scalars, as sigs.k8s.io/yaml reads kuma-cp's config file.
  const text = (body: string) =>
    kumaConfig(`runtime:\n  kubernetes:\n    injector:\n      ${body.split('\n').join('\n      ')}\n`);
  t.same(issuesOf(text('cniEnabled: yes\napplicationProbeProxyPort: 0x2328')), [], 'yes is true; hex is an int');
  t.same(issuesOf(text('builtinDNS: {port: 1_5053}')), [], 'underscores in a YAML 1.1 int');
  t.match(issuesOf(text('cniEnabled: "yes"')), [
    /cannot unmarshal string into Go struct field cniEnabled of type bool/,
  ]);
  t.match(issuesOf(text('applicationProbeProxyPort: 1.5')), [/cannot unmarshal number 1.5 into/]);
  // The transparent proxy ConfigMap goes through the same loader: `0777` is octal 511 there, and 1:30 a string.
  const tproxy = (body: string) => {
    const r = loadConfig({
      apiVersion: 'meshinject.dev/v1alpha1',
      kind: 'SidecarInjection',
      spec: { mesh: 'kuma', kuma: { transparentProxyConfig: body } },
    });
    return r.ok ? (r.settings as any).tproxyBase : r.issues;
  };
  t.equal(tproxy('kumaDPUser: 0777\n').kumaDPUser, 511, 'go-yaml v2 reads a leading 0 as octal');
  t.equal(tproxy('kumaDPUser: 1:30\n').kumaDPUser, '1:30', 'no YAML 1.1 sexagesimal in go-yaml v2');
});

t.test('Linkerd chart values: decoded into values.go types', async (t) => {
  const linkerd = (values: unknown) => ({
    apiVersion: 'meshinject.dev/v1alpha1',
    kind: 'SidecarInjection',
    spec: { mesh: 'linkerd', linkerd: { values } },
  });
  t.same(issuesOf(linkerd({ proxy: { uid: 2102, ports: { admin: 4191 } } })), []);
  t.same(issuesOf(linkerd({ proxy: { uid: '2102' } })), [
    'spec.linkerd.values.proxy.uid: json: cannot unmarshal string into Go struct field proxy.uid of type int64',
  ]);
  t.same(issuesOf(linkerd({ proxy: { ports: { admin: 2147483648 } } })), [
    'spec.linkerd.values.proxy.ports.admin: json: cannot unmarshal number 2147483648 into Go struct field proxy.ports.admin of type int32',
  ]);
  t.same(issuesOf(linkerd({ proxy: { livenessProbe: { timeoutSeconds: -1 } } })), [
    'spec.linkerd.values.proxy.livenessProbe.timeoutSeconds: json: cannot unmarshal number -1 into Go struct field proxy.livenessProbe.timeoutSeconds of type uint',
  ]);
  t.match(issuesOf(linkerd({ proxy: { ports: { admin: 70000 } } })), [/must be an integer from 0 to 65535/]);
});

t.test(
  'the CLI: a refused config value names the field; clusterNetworks and statusPort as the webhooks read them',
  async (t) => {
    const deployment = [
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata: {name: web, namespace: shop}',
      'spec:',
      '  selector: {matchLabels: {app: web}}',
      '  template:',
      '    metadata:',
      '      labels: {app: web}',
      '      annotations: {ANNOTATIONS}',
      '    spec: {containers: [{name: web, image: nginx}]}',
      '',
    ].join('\n');
    const run = (config: string, annotations = '') =>
      runCli(['--config', config], { input: deployment.replace('{ANNOTATIONS}', `{${annotations}}`) });
    const dir = t.testdir({
      'kuma.yaml': [
        'apiVersion: meshinject.dev/v1alpha1',
        'kind: SidecarInjection',
        'spec:',
        '  mesh: kuma',
        '  kuma:',
        '    controlPlaneConfig: {runtime: {kubernetes: {injector: {applicationProbeProxyPort: "9000"}}}}',
        '',
      ].join('\n'),
      'linkerd.yaml': [
        'apiVersion: meshinject.dev/v1alpha1',
        'kind: SidecarInjection',
        'spec:',
        '  mesh: linkerd',
        '  linkerd: {manual: true, values: {identityTrustAnchorsPEM: x, clusterNetworks: "10.0.0.0/8,,192.168.0.0/16"}}',
        '',
      ].join('\n'),
      'istio.yaml': 'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nspec: {mesh: istio}\n',
    });
    const kuma = run(`${dir}/kuma.yaml`);
    t.equal(kuma.status, 1, 'a config error');
    t.match(
      kuma.stderr,
      /applicationProbeProxyPort: json: cannot unmarshal string into Go struct field applicationProbeProxyPort of type uint32/,
    );
    t.equal(kuma.stdout, '', 'nothing written');
    const linkerd = run(`${dir}/linkerd.yaml`);
    t.not(linkerd.status, 0);
    t.match(
      linkerd.stderr,
      /cannot parse destination get networks: invalid CIDR address: {2}\(values clusterNetworks\)/,
    );
    t.match(linkerd.stderr, /Deployment\/web|shop\/web/, 'the resource is named');
    const istio = run(`${dir}/istio.yaml`, `proxy.istio.io/config: "statusPort: '+15020'"`);
    t.not(istio.status, 0);
    t.match(istio.stderr, /statusPort of the proxy config .*invalid character '\+' looking for beginning of value/);
    const quoted = run(`${dir}/istio.yaml`, `proxy.istio.io/config: "statusPort: '15021'"`);
    t.equal(quoted.status, 0, 'jsonpb takes an int32 from a string holding it');
    t.match(quoted.stdout, /15021/);
  },
);

/** One generator of spellings Go accepts or refuses: signs, leading zeros, underscores, hex, overflow by one, blanks, empty. */
const spelling = fc
  .tuple(
    fc.constantFrom('', '', ' ', '\t'),
    fc.constantFrom('', '', '+', '-'),
    fc.constantFrom('', '', '0', '00', '0x'),
    fc.oneof(
      fc.bigInt({ min: 0n, max: 70000n }),
      fc.constantFrom(0n, 32n, 33n, 65535n, 65536n, 2147483647n, 2147483648n, 4294967295n, 4294967296n),
    ),
    fc.constantFrom('', '', '_0', '.0', 'e1', ' ', 'x'),
  )
  .map(([lead, sign, prefix, n, tail]) => `${lead}${sign}${prefix}${n.toString(prefix === '0x' ? 16 : 10)}${tail}`);
const spellings = fc.oneof(spelling, fc.constantFrom('', ' ', '-', '+', '0x', '_1'));

t.test('properties: every site refuses what Go refuses and reads what Go reads', async (t) => {
  const inRange = (s: string, min: bigint, max: bigint) => BigInt(s) >= min && BigInt(s) <= max;
  // Istio statusPort (jsonpb int32 from a string): JSON's integer grammar, spaces around it, int32 range.
  fc.assert(
    fc.property(spellings, (s) => {
      const m = /^ *(-?(?:0|[1-9][0-9]*)) *$/.exec(s);
      const want = m?.[1] !== undefined && inRange(m[1], -(1n << 31n), (1n << 31n) - 1n);
      const got = decodeJsonpbInt(s, 'int32', 'statusPort');
      return got?.ok === want && (!got.ok || got.value === Number(m?.[1]));
    }),
  );
  // OpenShift blocks (fmt.Sscanf %d into uint32): blanks, then decimal digits, no sign, below 2^32.
  fc.assert(
    fc.property(spellings, spellings, (a, b) => {
      const num = (x: string) => /^[ \t]*([0-9]+)/.exec(x);
      const ma = /^[ \t]*([0-9]+)$/.exec(a);
      const mb = num(b);
      const want = ma !== null && mb !== null && BigInt(ma[1] ?? '') < 1n << 32n && BigInt(mb[1] ?? '') < 1n << 32n;
      return scanTwoUint32(`${a}/${b}`, '/').ok === want;
    }),
  );
  // CIDR prefix lengths (net.ParseCIDR, net.dtoi): digits only, leading zeros allowed, at most 32 for IPv4.
  fc.assert(fc.property(spellings, (s) => parseCIDR(`10.0.0.0/${s}`).ok === (/^[0-9]+$/.test(s) && BigInt(s) <= 32n)));
  // Kuma, Linkerd: a string never decodes into an integer field; a number does when it fits the Go type.
  const P = 'spec.kuma.controlPlaneConfig.runtime.kubernetes.injector';
  fc.assert(
    fc.property(spellings, (s) => {
      const kuma = issuesOf(kumaConfig({ builtinDNS: { port: s } }));
      const linkerd = issuesOf({
        apiVersion: 'meshinject.dev/v1alpha1',
        kind: 'SidecarInjection',
        spec: { mesh: 'linkerd', linkerd: { values: { proxy: { uid: s } } } },
      });
      return (
        kuma.length === 1 &&
        kuma[0] ===
          `${P}.builtinDNS.port: json: cannot unmarshal string into Go struct field builtinDNS.port of type uint32` &&
        linkerd.length === 1 &&
        /cannot unmarshal string into Go struct field proxy.uid of type int64/.test(linkerd[0] ?? '')
      );
    }),
    { numRuns: 40 },
  );
  fc.assert(
    fc.property(fc.integer({ min: -2, max: 70000 }), fc.boolean(), (n, fraction) => {
      const v = fraction ? n + 0.5 : n;
      const want = !fraction && n >= 0 && n <= 65535;
      return (issuesOf(kumaConfig({ applicationProbeProxyPort: v })).length === 0) === want;
    }),
    { numRuns: 40 },
  );
  // Kuma booleans in its config file: go-yaml v2's YAML 1.1 words are bools; anything else is a string, refused.
  const TRUE = ['true', 'True', 'TRUE', 'yes', 'Yes', 'YES', 'y', 'Y', 'on', 'On', 'ON'];
  const FALSE = ['false', 'False', 'FALSE', 'no', 'No', 'NO', 'n', 'N', 'off', 'Off', 'OFF'];
  fc.assert(
    fc.property(fc.constantFrom(...TRUE, ...FALSE, 't', 'f', '1', '0', 'tRue', 'yes!', '"true"'), (word) => {
      const issues = issuesOf(kumaConfig(`runtime: {kubernetes: {injector: {cniEnabled: ${word}}}}\n`));
      return (issues.length === 0) === (TRUE.includes(word) || FALSE.includes(word));
    }),
    { numRuns: 30 },
  );
  t.pass('every generated spelling read as Go reads it');
});

t.test("meshinject's own booleans (not a webhook value) are exactly true or false, by schema", async (t) => {
  const cm = (data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data });
  t.match(issuesOf(cm({ mesh: 'istio', 'istio.strictInjectValues': 'yes' })), [/strictInjectValues must be one of/]);
  t.match(issuesOf(cm({ mesh: 'linkerd', 'linkerd.manual': 'True' })), [/linkerd\.manual must be one of/]);
  t.same(issuesOf(cm({ mesh: 'istio', 'istio.enableNamespacesByDefault': 'true' })), []);
  const spec = (manual: unknown) => ({
    apiVersion: 'meshinject.dev/v1alpha1',
    kind: 'SidecarInjection',
    spec: { mesh: 'linkerd', linkerd: { manual } },
  });
  t.match(issuesOf(spec('yes')), [/manual/]);
});
