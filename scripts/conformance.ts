// Conformance runner CLI: `npm run conformance -- <corpus-dir> [--min <file.json>] [--filter <regex>] [--sample <n>]`.
// <corpus-dir> holds `cases/`, or subdirectories that do (istio-versions/<release>): then categories read
// `<release>/<category>`. `--sample n` runs about n cases per corpus (every category represented, evenly spaced by name). Prints `FAIL <case> [<category>]: <reason>` per failing case and
// `<corpus> conformance: P/N passed (<category>)` per category, the corpus being the directory's name. Exit code 0 unless `--min` (JSON: category -> minimum passes) is not met (1), or usage (2).
import { readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { checkMinimums, corpusDirs, runConformance, summarize, type CaseResult } from './conformance/runner.ts';

async function main(argv: string[]): Promise<number> {
  let dir: string | undefined;
  let minFile: string | undefined;
  let filter: RegExp | undefined;
  let sample: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--min') minFile = argv[++i];
    else if (a === '--filter') filter = new RegExp(argv[++i] ?? '');
    else if (a === '--sample') {
      sample = Number(argv[++i]);
      if (!Number.isInteger(sample) || sample < 1) {
        process.stderr.write('--sample takes a positive integer\n');
        return 2;
      }
    } else if (!dir) dir = a;
    else {
      process.stderr.write(`unexpected argument: ${a}\n`);
      return 2;
    }
  }
  if (!dir) {
    process.stderr.write('usage: conformance <corpus-dir> [--min <file.json>] [--filter <regex>] [--sample <n>]\n');
    return 2;
  }
  const results: CaseResult[] = [];
  for (const corpus of corpusDirs(dir)) {
    const prefix = corpus.label ? `${corpus.label}/` : '';
    for (const r of await runConformance(corpus.dir, { ...(filter ? { filter } : {}), ...(sample ? { sample } : {}) }))
      results.push({ ...r, category: prefix + r.category });
  }
  for (const r of results) if (!r.pass) process.stdout.write(`FAIL ${r.name} [${r.category}]: ${r.reason}\n`);
  const summary = summarize(results);
  for (const [cat, s] of Object.entries(summary)) {
    process.stdout.write(`${basename(resolve(dir))} conformance: ${s.passed}/${s.total} passed (${cat})\n`);
  }
  if (minFile) {
    const min = JSON.parse(readFileSync(minFile, 'utf8')) as Record<string, number>;
    const short = checkMinimums(summary, min);
    for (const m of short) process.stderr.write(`below minimum: ${m}\n`);
    if (short.length > 0) return 1;
  }
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
