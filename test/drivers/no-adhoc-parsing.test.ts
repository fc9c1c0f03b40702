// The drivers read the values a webhook parses with Go through src/drivers/go-parse.ts (issue #37, item 4): this
// scan forbids ad-hoc parsing in src/drivers (`Number(` on a string, `parseFloat`, `=== 'true'`, digit regular
// expressions). Every remaining hit is listed below with why it is not a Go-parsed webhook value (an entry marked
// NOT YET fails); the list only shrinks: an entry that no longer matches fails, so it is taken off.
import t from 'tap';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const DRIVERS = fileURLToPath(new URL('../../src/drivers/', import.meta.url));

/** What counts as ad-hoc parsing on a code line (a `Number(x.value)` of a go-parse result is a conversion, not a parse). */
const PATTERNS: ReadonlyArray<[string, RegExp]> = [
  ['Number( on a value', /\bNumber\((?![\w.]*\.value\)|scaledValue\()/],
  ['parseFloat / Number.parse*', /\bparseFloat\(|\bNumber\.parse(?:Int|Float)\(/],
  ['comparison with "true"/"false"', /[=!]==\s*(['"])(?:true|false)\1/],
  ['a digit regular expression', /\\d[+*{]|\[0-9\][+*{]/],
];

const OWN = "reads meshinject's or the mesh's own output back (not a value a webhook parses from the user)";
const SWITCH = 'the mesh compares the string itself (no Go parser: an exact string switch in its source)';
const VERSION = 'a release version string, not a webhook value';
const MESSAGE = 'rewrites an error message';
const OWN_CONFIG =
  'meshinject\'s own config field, which its schema already holds to a boolean or exactly "true"/"false" (test/drivers/go-parse-decode.test.ts)';
/** A site left for later would be listed with a reason containing this; none may be (issue #37 item 4 is done). */
const NOT_YET = 'NOT YET';

/** `[file under src/drivers, text on the line, why]`. */
const ALLOWED: ReadonlyArray<[string, string, string]> = [
  [
    'kuma/tproxy.ts',
    '/^[-+]?(?:[0-9][0-9_]*',
    'decides how a YAML scalar is written (quoting), not a parse of a value',
  ],
  ['kuma/probes.ts', '/^\\/tcp\\/([0-9]+)$/', OWN],
  ['kuma/probes.ts', "['tcpSocket', { port: Number(tcp[1]) }]", OWN],
  ['kuma/probes.ts', '/^\\/grpc\\/([0-9]+)$/', OWN],
  ['kuma/probes.ts', "['grpc', { port: Number(grpc[1])", OWN],
  ['kuma/probes.ts', '/^\\/([0-9]+)(\\/.*)$/s', OWN],
  ['kuma/probes.ts', 'port: Number(http[1]),', OWN],
  ['kuma/annotations.ts', "if (v === 'true' || v === 'yes'", `${SWITCH} (Kuma GetBooleanWithDefault)`],
  ['kuma/annotations.ts', "if (v === 'false' || v === 'no'", `${SWITCH} (Kuma GetBooleanWithDefault)`],
  ['kuma/inject.ts', "if (tp === 'false' || tp === 'no'", `${SWITCH} (a warning about a value Kuma ignores)`],
  ['kuma/uninject.ts', 'Number(injected.metadata.annotations?.[APP_PROBE_PROXY_PORT]', OWN],
  ['kuma/patches.ts', 'node = node[Number(key)]', 'a JSON Pointer array index (RFC 6901) of a ContainerPatch'],
  [
    'kuma/patches.ts',
    "/^[0-9]+$/.test(next) || next === '-'",
    'a JSON Pointer array index (RFC 6901) of a ContainerPatch',
  ],
  [
    'custom/decide.ts',
    "inject: raw === 'true'",
    "meshinject's own meshinject.dev/inject label, validated to be exactly true or false",
  ],
  [
    'custom/config.ts',
    "['config.kubernetes.io/local-config'] === 'true'",
    "kpt's local-config annotation, compared as kpt does",
  ],
  ['custom/render.ts', '/ - (\\d+):(\\d+)$/', MESSAGE],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a line of source text the scan must find, template literal included
  ['custom/render.ts', 'column ${Number(miss[2]) + 1}', MESSAGE],
  ['custom/render.ts', '/^Parse error on line (\\d+)', MESSAGE],
  ['istio/flags.ts', 'at line \\d+, column \\d+', MESSAGE],
  ['istio/template-sources.ts', '/^v?1\\.(\\d+)(\\.|$|-)/', VERSION],
  ['istio/template-sources.ts', 'return m ? Number(m[1]) : undefined;', VERSION],
  ['istio/native-auto.ts', '/^v?(\\d+)\\.(\\d+)/', VERSION],
  ['istio/native-auto.ts', '[Number(m[1]), Number(m[2])]', VERSION],
  ['istio/configmap-source.ts', '/-(v?1\\.\\d+\\.\\d+)/', VERSION],
  ['linkerd/config.ts', '/^edge-(\\d+)\\.(\\d+)\\./', VERSION],
  ['linkerd/config.ts', 'Number(edge[1]) * 100 + Number(edge[2])', VERSION],
  ['istio/go-model.ts', '[s, Number(n)]', 'a table of Go enum numbers written here, not input'],
  [
    'istio/go-funcs.ts',
    'Math.trunc(Number(p.containerPort ?? 0))',
    'a containerPort the manifest gives as a number (Go reads it typed)',
  ],
  ['istio/decide.ts', "if (raw === 'true' || raw === 'false')", `${SWITCH} (Istio injectRequired)`],
  ['istio/decide.ts', "inject: read.value === 'true'", `${SWITCH} (Istio injectRequired)`],
  [
    'istio/webhook.ts',
    "if (podInject === 'false')",
    `${SWITCH} (a webhook objectSelector matches label values exactly)`,
  ],
  ['istio/webhook.ts', "if (podInject === 'true'", `${SWITCH} (a webhook objectSelector matches label values exactly)`],
  ['istio/template-data.ts', "return v === true || v === 'true';", `${SWITCH} (the templates' eq "true")`],
  ['istio/template-data.ts', "capAnnotation === 'true'", `${SWITCH} (the templates' eq "true")`],
  ['istio/config.ts', "setOwn(out, k, v === 'true')", OWN_CONFIG],
  ['istio/decide.ts', "const asks = selector === 'true';", `${SWITCH} (Istio injectRequired, label over annotation)`],
  ['osm/decide.ts', "if (v === 'enabled' || v === 'yes' || v === 'true')", `${SWITCH} (OSM isAnnotatedForInjection)`],
  ['osm/decide.ts', "if (v === 'disabled' || v === 'no' || v === 'false')", `${SWITCH} (OSM isAnnotatedForInjection)`],
  ['linkerd/config.ts', "v === true || v === 'true'", OWN_CONFIG],
  [
    'custom/decide.ts',
    "if (raw !== 'true' && raw !== 'false')",
    "meshinject's own meshinject.dev/inject label, validated to be exactly true or false",
  ],
  ['istio/inject.ts', "if (a === 'true') return true;", `${SWITCH} (Istio injectPod, nativeSidecar == "true")`],
  ['istio/inject.ts', "if (a === 'false') return false;", `${SWITCH} (Istio injectPod, nativeSidecar == "false")`],
  [
    'istio/template-data.ts',
    "nativeValue !== 'false'",
    `${SWITCH} (the injection template's ne (index .ObjectMeta.Annotations "sidecar.istio.io/nativeSidecar" | default ...) "false")`,
  ],
  ['istio/webhook.ts', "podInject !== 'true'", `${SWITCH} (a webhook objectSelector matches label values exactly)`],
  [
    'istio/workload-meta.ts',
    'const CRONJOB_JOB_NAME',
    "a Job name a CronJob generated (Istio's own pattern), not a value",
  ],
];

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') && !p.includes('.gen.') ? [p] : [];
  });
}

/** Code lines (comments and imports left out) that match a pattern: `{file, line, text, what}`. */
function scan(
  root: string,
  paths: readonly string[],
): Array<{ file: string; line: number; text: string; what: string }> {
  const hits: Array<{ file: string; line: number; text: string; what: string }> = [];
  for (const p of paths) {
    const file = relative(root, p).split('\\').join('/');
    if (/^go-parse(-[a-z]+)?\.ts$/.test(file)) continue;
    readFileSync(p, 'utf8')
      .split('\n')
      .forEach((text, i) => {
        const code = text.trim();
        if (code.startsWith('*') || code.startsWith('/**') || code.startsWith('//') || code.startsWith('import '))
          return;
        for (const [what, re] of PATTERNS) if (re.test(code)) hits.push({ file, line: i + 1, text: code, what });
      });
  }
  return hits;
}

t.test('no driver parses a value ad hoc outside the listed sites; every listed site still exists', async (t) => {
  const hits = scan(DRIVERS, files(DRIVERS));
  t.ok(hits.length > 0 && hits.some((h) => h.file.startsWith('istio/')), 'the scan reads the drivers');
  const unlisted = hits.filter((h) => !ALLOWED.some(([f, text]) => f === h.file && h.text.includes(text)));
  t.same(
    unlisted.map((h) => `src/drivers/${h.file}:${h.line}: ${h.what}: ${h.text}`),
    [],
    'read it with ../go-parse.ts, or list it here with the reason',
  );
  const stale = ALLOWED.filter(([f, text]) => !hits.some((h) => h.file === f && h.text.includes(text)));
  t.same(
    stale.map(([f, text]) => `${f}: ${text}`),
    [],
    'a listed site that no longer matches comes off the list',
  );
  t.same(
    ALLOWED.filter(([, , why]) => why.toUpperCase().includes(NOT_YET)).map(([f, text]) => `${f}: ${text}`),
    [],
    'no site is left for later: every webhook value is read through ../go-parse.ts',
  );
  t.comment(`${hits.length} sites, each listed with why it is not a Go-parsed webhook value`);
});

t.test('the scan finds each kind of ad-hoc parse, and not a conversion of a go-parse result', async (t) => {
  const dir = t.testdir({
    'x.ts': [
      "const a = Number(annotations['k']);",
      "const b = v === 'true';",
      'const c = /^\\d+$/.test(s);',
      'const d = /^[0-9]+$/.test(s);',
      'const e = parseFloat(s);',
      'const f = Number(parsed.value);',
      '// Number(x) in a comment',
    ].join('\n'),
  });
  const hits = scan(dir, [join(dir, 'x.ts')]);
  t.same(
    hits.map((h) => h.line),
    [1, 2, 3, 4, 5],
  );
});
