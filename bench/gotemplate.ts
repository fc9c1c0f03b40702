/**
 * The Go-template path against the built-in Handlebars path, on the benchmark generator's workloads:
 *
 *   node --import tsx bench/gotemplate.ts --templates <fn-config.yaml> [--sizes 1000,10000] [--runs 3]
 *
 * `<fn-config.yaml>` is a SidecarInjection whose `spec.istio` holds an injector config with Istio's own Go
 * templates (e.g. a case of an Istio release corpus, or your cluster's `istio-sidecar-injector` config
 * pasted into `injectorConfig`). For each N: the real CLI on the same ResourceList, once with the benchmark's
 * config (built-in templates) and once with that `spec.istio` added; the median wall time of `--runs` runs
 * each, and their ratio. Figures, not tests: nothing fails.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { BENCH_CONFIG, generateResources, toResourceList } from './generate.ts';
import { measure, median } from './measure.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = `${ROOT}bench/out`;
const CLI = `${ROOT}bin/meshinject.js`;

function parseArgs(argv: string[]): { templates: string; sizes: number[]; runs: number } {
  let templates = '';
  let sizes = [1000, 10000];
  let runs = 3;
  for (let i = 0; i < argv.length; i++) {
    const x = argv[i]!;
    if (x === '--templates') templates = argv[++i]!;
    else if (x === '--sizes') sizes = argv[++i]!.split(',').map(Number);
    else if (x === '--runs') runs = Number(argv[++i]);
    else throw new Error(`bench: unknown argument ${x}`);
  }
  if (!templates) throw new Error('bench: --templates <fn-config.yaml> is required');
  return { templates, sizes, runs };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const source = parse(readFileSync(args.templates, 'utf8')) as {
    spec: { istio: Record<string, unknown>; nativeSidecars?: boolean };
  };
  const base = parse(BENCH_CONFIG) as { spec: Record<string, unknown> };
  const goConfig = stringify(
    { ...base, spec: { ...base.spec, nativeSidecars: source.spec.nativeSidecars ?? false, istio: source.spec.istio } },
    { blockQuote: 'literal', lineWidth: 0 },
  );
  const builtinConfig = stringify({
    ...base,
    spec: { ...base.spec, nativeSidecars: source.spec.nativeSidecars ?? false },
  });
  mkdirSync(OUT, { recursive: true });
  process.stdout.write('| workloads | built-in (s) | Go templates (s) | ratio |\n|---:|---:|---:|---:|\n');
  for (const n of args.sizes) {
    const resources = generateResources(n);
    const seconds: Record<string, number> = {};
    for (const [label, config] of [
      ['builtin', builtinConfig],
      ['go', goConfig],
    ] as const) {
      const input = `${OUT}/gotemplate-${label}-${n}.yaml`;
      writeFileSync(input, toResourceList(resources, config));
      const times: number[] = [];
      for (let r = 0; r < args.runs; r++) {
        const m = await measure(process.execPath, [CLI], {
          stdinFile: input,
          stdoutFile: `${OUT}/gotemplate-${label}-${n}.out.yaml`,
        });
        if (m.exitCode !== 0 && m.exitCode !== 1)
          throw new Error(`${label} N=${n}: exit ${m.exitCode}: ${m.stderr.slice(0, 500)}`);
        times.push(m.seconds);
      }
      seconds[label] = median(times);
    }
    const ratio = seconds.go! / seconds.builtin!;
    process.stdout.write(
      `| ${n} | ${seconds.builtin!.toFixed(2)} | ${seconds.go!.toFixed(2)} | ${ratio.toFixed(2)}x |\n`,
    );
  }
}

await main();
