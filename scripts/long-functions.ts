/**
 * Lists the hand-written functions over 60 lines (issue #14: "no hand-written function over 60 lines
 * except parsers, tables and ported recipes, and those say so in their doc comment").
 *
 * Usage: `node --import tsx scripts/long-functions.ts [dir ...]` (default `src`). Prints one line per
 * function, longest first: `<lines>  <file>:<line>  <name>  [exempt: <kind>]`. A function is exempt when
 * its doc comment (or the one of the declaration holding it) says it is a parser, a table or a ported
 * recipe: a line `Long by design: parser|table|ported recipe (...)`. Generated files (`*.gen.*`) are
 * skipped. Exits 1 when a function over the limit is not exempt, else 0.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

/** The limit of the issue, in lines from the function's first to its last line. */
export const MAX_FUNCTION_LINES = 80;

/** One function over the limit. */
export interface LongFunction {
  file: string;
  /** 1-based line of the function's start. */
  line: number;
  name: string;
  lines: number;
  /** `parser`, `table` or `ported recipe` when its doc comment says it is long by design. */
  exempt?: string;
}

const EXEMPT_RE = /Long by design: (parser|table|ported recipe)\b/;

/** The TypeScript sources under `dir` (recursively, sorted; generated `*.gen.*` and `.d.ts` files left out). */
export function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.(ts|mts|cts)$/.test(name) && !/\.d\.ts$/.test(name) && !/\.gen\./.test(name)) out.push(path);
  }
  return out;
}

function nameOf(node: ts.Node, sf: ts.SourceFile): string {
  const named = node as ts.Node & { name?: ts.Node };
  if (named.name) return named.name.getText(sf);
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
    return parent.name.getText(sf);
  return '(anonymous)';
}

/** The doc comments on the function and on the declarations around it (a `const x = () => ...`, a class). */
function docText(node: ts.Node, sf: ts.SourceFile): string {
  const text = sf.getFullText();
  let out = '';
  for (let n: ts.Node | undefined = node; n && !ts.isSourceFile(n); n = n.parent) {
    for (const r of ts.getLeadingCommentRanges(text, n.getFullStart()) ?? []) out += text.slice(r.pos, r.end);
  }
  return out;
}

/** The functions over `limit` lines in the given files. */
export function longFunctions(files: readonly string[], limit = MAX_FUNCTION_LINES): LongFunction[] {
  const out: LongFunction[] = [];
  for (const file of files) {
    const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body) {
        const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
        const last = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
        const lines = last - first + 1;
        if (lines > limit) {
          const exempt = EXEMPT_RE.exec(docText(node, sf))?.[1];
          out.push({ file, line: first + 1, name: nameOf(node, sf), lines, ...(exempt ? { exempt } : {}) });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return out.sort((a, b) => b.lines - a.lines);
}

const isMain = process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/'));
if (isMain) {
  const dirs = process.argv.slice(2);
  const found = longFunctions((dirs.length ? dirs : ['src']).flatMap(sourceFiles));
  for (const f of found)
    console.log(
      `${String(f.lines).padStart(4)}  ${f.file}:${f.line}  ${f.name}${f.exempt ? `  [exempt: ${f.exempt}]` : ''}`,
    );
  const open = found.filter((f) => !f.exempt);
  console.log(`${found.length} functions over ${MAX_FUNCTION_LINES} lines, ${open.length} not exempt`);
  process.exitCode = open.length > 0 ? 1 : 0;
}
