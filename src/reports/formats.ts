import type * as Sarif from 'sarif';
import type { Finding, Report, WorkloadReport } from './report.ts';
import { reportTotals } from './report.ts';
import { escapeLine } from '../results/escape-line.ts';

/**
 * CI report formats, each a pure function of a `Report`:
 * - `junitReport`: JUnit XML (the schema Jenkins, GitLab and GitHub test reporters read): one testcase per
 *   workload, a failure per failing finding with its message and `file:line:column`;
 * - `sarifReport`: SARIF 2.1.0 (OASIS), rule ids = reason codes, `physicalLocation` regions, `fixes` for
 *   findings whose fix is injecting;
 * - `githubReport`: GitHub Actions workflow commands (`::error file=...,line=...::message`);
 * - `tableReport`: a plain-text table (one row per workload, then totals), for stderr.
 */

/**
 * Short descriptions of the mesh-neutral rule ids (shared decision reasons, check rules, error classes), for SARIF
 * `rules`; a driver's own reasons are described by the driver (`Report.reasons`, from `MeshDriver.reasonInfo`).
 */
export const RULE_DESCRIPTIONS: Readonly<Record<string, string>> = {
  'host-network': 'pods on the host network are never injected',
  'ignored-namespace': 'the namespace is in ignoredNamespaces',
  'namespace-not-selected': 'the namespace does not match namespaceSelector',
  'never-inject-selector': 'the pod labels match a neverInjectSelector',
  'always-inject-selector': 'the pod labels match an alwaysInjectSelector',
  'policy-enabled': 'nothing on the pod decides and the policy is enabled',
  'policy-disabled': 'nothing on the pod decides and the policy is disabled',
  'not-injected': 'check: a workload the config selects carries no sidecar',
  'injection-drift': 'check: the injection differs from what the current config produces',
  'unwanted-sidecar': 'check: a workload the config skips carries a sidecar',
  'injection-required': 'check: spec.check.requireInjection: the namespace requires injection',
  'opt-out-forbidden': 'check: the workload opts out where spec.check forbids it',
  'invalid-workload': 'the workload cannot be injected as written (invalid field)',
  'bad-annotation': 'a pod or namespace annotation has a value the mesh rejects',
  'bad-selector': 'a label selector does not parse',
  'merge-error': 'the injected fragment cannot be merged into the pod template',
  'template-error': 'an injection template failed to render or rendered something unusable',
  'inject-error': 'the driver cannot inject or uninject the workload faithfully',
  'unfaithful-edit': 'the change cannot be written faithfully; the resource is left as it was',
  'bad-input': 'the input cannot be read',
  'workload-warning': 'a warning about the workload',
  'invalid-config': 'the functionConfig is invalid',
  'config-warning': 'a warning about the functionConfig',
};

/** XML 1.0 text: escapes markup characters; characters XML cannot hold (C0 controls, lone surrogates) become U+FFFD. */
export function xmlEscape(s: string): string {
  return s
    .replace(
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the characters XML 1.0 cannot hold (its Char production) are what this class matches
      /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g,
      '\uFFFD',
    )
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;')
    .replace(/\r/g, '&#13;')
    .replace(/\t/g, '&#9;')
    .replace(/\n/g, '&#10;');
}

function where(f: Finding): string {
  const l = f.location;
  return l.file ? `${l.file}${l.line ? `:${l.line}:${l.column ?? 1}` : ''}` : '';
}

function workloadTitle(w: WorkloadReport): string {
  return `${w.kind} ${w.namespace ? `${w.namespace}/` : ''}${w.name}`;
}

/**
 * JUnit XML: a testsuite per command, a testcase per workload (its driver tags as testcase `properties`, the form
 * pytest's `record_property` writes), a `functionConfig` testcase for run-level findings.
 */
export function junitReport(report: Report): string {
  const cases: Array<{
    name: string;
    classname: string;
    file?: string;
    line?: number;
    failures: Finding[];
    out: string[];
    properties?: Record<string, string>;
  }> = [];
  if (report.general.length > 0) {
    cases.push({
      name: 'functionConfig',
      classname: 'meshinject',
      failures: report.general.filter((f) => f.fails),
      out: report.general.map((f) => `[${f.level}] ${f.message}`),
    });
  }
  for (const w of report.workloads) {
    cases.push({
      name: workloadTitle(w),
      classname: `${w.namespace ?? '(default namespace)'}.${w.kind}`,
      ...(w.location.file ? { file: w.location.file } : {}),
      ...(w.location.line ? { line: w.location.line } : {}),
      failures: w.findings.filter((f) => f.fails),
      out: w.findings.map((f) => `[${f.level}] ${f.rule}: ${f.message}`),
      ...(w.tags ? { properties: w.tags } : {}),
    });
  }
  const failures = cases.filter((c) => c.failures.length > 0).length;
  const suite = `meshinject ${report.command}`;
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="meshinject" tests="${cases.length}" failures="${failures}" errors="0">`,
    `  <testsuite name="${xmlEscape(suite)}" tests="${cases.length}" failures="${failures}" errors="0" skipped="0">`,
  ];
  for (const c of cases) {
    const attrs = `name="${xmlEscape(c.name)}" classname="${xmlEscape(c.classname)}"${c.file ? ` file="${xmlEscape(c.file)}"` : ''}${c.line ? ` line="${c.line}"` : ''}`;
    lines.push(`    <testcase ${attrs}>`);
    if (c.properties) {
      lines.push('      <properties>');
      for (const [k, v] of Object.entries(c.properties))
        lines.push(`        <property name="${xmlEscape(k)}" value="${xmlEscape(v)}"/>`);
      lines.push('      </properties>');
    }
    for (const f of c.failures) {
      const at = where(f);
      lines.push(
        `      <failure message="${xmlEscape(f.message)}" type="${xmlEscape(f.rule)}">${xmlEscape(`${at ? `${at}: ` : ''}${f.field ? `${f.field}: ` : ''}${f.message}`)}</failure>`,
      );
    }
    if (c.out.length) lines.push(`      <system-out>${xmlEscape(c.out.join('\n'))}</system-out>`);
    lines.push('    </testcase>');
  }
  lines.push('  </testsuite>', '</testsuites>', '');
  return lines.join('\n');
}

/** A relative file path as a URI reference (each segment percent-encoded). */
function fileUri(path: string): string {
  return path
    .split(/[\\/]/)
    .map((s) => encodeURIComponent(s))
    .join('/');
}

/** SARIF 2.1.0 log: errors and warnings (notes left out), rules for the rule ids used, fixes where known. */
export function sarifReport(report: Report): string {
  const findings = [
    ...report.general,
    ...report.workloads.flatMap((w) => w.findings.map((f) => ({ ...f, workload: w }))),
  ].filter((f) => f.level !== 'note') as Array<Finding & { workload?: WorkloadReport }>;
  const ruleIds = [...new Set(findings.map((f) => f.rule))];
  const rules: Sarif.ReportingDescriptor[] = ruleIds.map((id) => ({
    id,
    shortDescription: {
      text:
        (Object.hasOwn(RULE_DESCRIPTIONS, id)
          ? RULE_DESCRIPTIONS[id]
          : report.reasons && Object.hasOwn(report.reasons, id)
            ? report.reasons[id]?.description
            : undefined) ?? id,
    },
  }));
  const results: Sarif.Result[] = findings.map((f) => {
    const r: Sarif.Result = {
      ruleId: f.rule,
      ruleIndex: ruleIds.indexOf(f.rule),
      level: f.level,
      message: { text: f.field ? `${f.message} (${f.field})` : f.message },
      ...(f.workload?.tags ? { properties: { ...f.workload.tags } } : {}),
    };
    if (f.location.file) {
      const physical: Sarif.PhysicalLocation = { artifactLocation: { uri: fileUri(f.location.file) } };
      if (f.location.line) physical.region = { startLine: f.location.line, startColumn: f.location.column ?? 1 };
      const loc: Sarif.Location = { physicalLocation: physical };
      if (f.workload) {
        loc.logicalLocations = [
          {
            name: f.workload.name,
            fullyQualifiedName: `${f.workload.apiVersion}/${f.workload.kind}/${f.workload.namespace ? `${f.workload.namespace}/` : ''}${f.workload.name}`,
            kind: 'resource',
          },
        ];
      }
      r.locations = [loc];
    }
    if (f.fix && f.location.file) {
      const { start, end } = f.fix.span;
      r.fixes = [
        {
          description: { text: f.fix.description },
          artifactChanges: [
            {
              artifactLocation: { uri: fileUri(f.location.file) },
              replacements: [
                {
                  deletedRegion: {
                    startLine: start.line,
                    startColumn: start.column,
                    endLine: end.line,
                    endColumn: end.column,
                  },
                  insertedContent: { text: f.fix.text },
                },
              ],
            },
          ],
        },
      ];
    }
    return r;
  });
  const log: Sarif.Log = {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: { driver: { name: 'meshinject', version: report.toolVersion, rules } },
        results,
      },
    ],
  };
  return `${JSON.stringify(log, null, 2)}\n`;
}

/**
 * Escapes a workflow command's message (`%`, CR, LF, as the Actions runner decodes them) and, for properties,
 * also `:` and `,`; then the other control characters with `escapeLine` (ESC, BEL, C1, bidi overrides).
 */
function ghEscape(s: string, property: boolean): string {
  let out = escapeLine(s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A'));
  if (property) out = out.replace(/:/g, '%3A').replace(/,/g, '%2C');
  return out;
}

/** GitHub Actions workflow commands: `::error` / `::warning` per finding (notes left out). */
export function githubReport(report: Report): string {
  const all = [...report.general, ...report.workloads.flatMap((w) => w.findings)].filter((f) => f.level !== 'note');
  return all
    .map((f) => {
      const props = [
        f.location.file ? `file=${ghEscape(f.location.file, true)}` : '',
        f.location.line ? `line=${f.location.line}` : '',
        f.location.column ? `col=${f.location.column}` : '',
        `title=${ghEscape(`meshinject ${f.rule}`, true)}`,
      ].filter((p) => p !== '');
      const cmd = f.fails || f.level === 'error' ? 'error' : 'warning';
      return `::${cmd} ${props.join(',')}::${ghEscape(f.field ? `${f.message} (${f.field})` : f.message, false)}\n`;
    })
    .join('');
}

/**
 * A text table: NAMESPACE KIND NAME DECISION REASON MESH, then a column per driver tag any workload carries
 * (`WorkloadReport.tags`, upper-cased: Istio's DATAPLANE; `-` where a workload has none), one row per workload
 * (cells escaped: `escapeLine`), then totals.
 */
export function tableReport(report: Report): string {
  const tagKeys = [...new Set(report.workloads.flatMap((w) => Object.keys(w.tags ?? {})))];
  const head = ['NAMESPACE', 'KIND', 'NAME', 'DECISION', 'REASON', 'MESH', ...tagKeys.map((k) => k.toUpperCase())];
  const rows = report.workloads.map((w) =>
    [
      w.namespace ?? '(default)',
      w.kind,
      w.name,
      w.decision,
      w.reason,
      w.mesh,
      ...tagKeys.map((k) => w.tags?.[k] ?? '-'),
    ].map(escapeLine),
  );
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]?.length ?? 0)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const t = reportTotals(report);
  const parts = [...t.byDecision].map(([d, n]) => `${n} ${d}`);
  const general = report.general.filter((f) => f.level !== 'note').length;
  const totals = `${t.workloads} workload(s)${parts.length ? `: ${parts.join(', ')}` : ''}; ${t.failing} failing finding(s)${general ? `; ${general} about the functionConfig` : ''}`;
  return `${[line(head), ...rows.map(line), totals].join('\n')}\n`;
}
