/**
 * Issue #35 item 2: the pipeline turns errors into results in one place. Its stages throw typed errors, and
 * src/pipeline/failures.ts maps them (`orFailure`, `quietly`, `orElse`); no other file of the pipeline catches.
 * The scan reads the syntax tree (a `catch` in a comment or a string does not count), and is tried on a planted
 * catch so that it cannot pass by finding nothing.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { sourceFiles } from '../../scripts/long-functions.ts';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

/** The 1-based lines of the `catch` clauses of a source text. */
function catchLines(file: string, text: string): number[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: number[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isCatchClause(n)) out.push(sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/** `file:line` of each catch in the pipeline's files (src/pipeline.ts, src/pipeline/) outside failures.ts. */
function strayCatches(files: ReadonlyArray<{ path: string; text: string }>): string[] {
  return files
    .filter((f) => f.path !== 'pipeline/failures.ts')
    .flatMap((f) => catchLines(f.path, f.text).map((line) => `src/${f.path}:${line}`));
}

const pipelineFiles = () =>
  [join(SRC, 'pipeline.ts'), ...sourceFiles(join(SRC, 'pipeline'))].map((p) => ({
    path: relative(SRC, p).split('\\').join('/'),
    text: readFileSync(p, 'utf8'),
  }));

t.test('every catch of the pipeline is in src/pipeline/failures.ts', async (t) => {
  const files = pipelineFiles();
  const failures = files.find((f) => f.path === 'pipeline/failures.ts');
  t.ok(files.some((f) => f.path === 'pipeline/workload.ts') && failures, 'the scan reads the pipeline');
  t.ok(catchLines('failures.ts', failures?.text ?? '').length > 0, 'the mapping catches there');
  t.same(strayCatches(files), []);
});

t.test('a catch planted in a stage is found; one in a comment or string is not', async (t) => {
  const planted = [
    ...pipelineFiles(),
    {
      path: 'pipeline/workload.ts',
      text: "// try { x } catch (e) {}\nconst s = 'catch (e)';\nexport function f(): number {\n  try {\n    return 1;\n  } catch {\n    return 0;\n  }\n}\n",
    },
  ];
  t.same(strayCatches(planted), ['src/pipeline/workload.ts:6']);
});
