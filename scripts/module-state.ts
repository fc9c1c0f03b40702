/**
 * Lists module-level mutable state (issue #35 item 4: run state is a value passed down, not module state).
 *
 * A finding is a top-level declaration of a source file that holds state between calls:
 * - a `let` or `var` (exported or not);
 * - a `const` bound to a container (`new Map`/`Set`/`WeakMap`/`WeakSet`, an array or an object literal, `as`,
 *   `satisfies` and parentheses looked through) that the file changes: a mutating method called on it or on a
 *   part of it (`x.set(...)`, `x.a.push(...)`), an assignment, `++`/`--` or `delete` on a part of it
 *   (`x.a = 1`, `x[k]++`), or the container passed first to a function that writes into its first argument
 *   (`Object.assign`, `setOwn`, `assignOwn`, `getOrMake`, ...).
 *
 * A reference is matched by name within the file (a local that shadows the name counts too: rename it).
 * A declaration whose doc comment holds a line `Module state by design: <why>` is listed as exempt: a pure
 * memo keyed by immutable inputs (its entries never change what a call returns), or a table filled once at load.
 *
 * Usage: `node --import tsx scripts/module-state.ts [dir ...]` (default `src`, the CLI edge `src/cli.ts` and
 * `src/cli/` left out). Prints `<file>:<line>  <name>  <why>  [exempt]`; exits 1 when a finding is not exempt.
 */
import { readFileSync } from 'node:fs';
import { relative, sep } from 'node:path';
import ts from 'typescript';
import { sourceFiles } from './long-functions.ts';

/** One top-level declaration holding mutable state. */
export interface ModuleState {
  file: string;
  /** 1-based line of the declaration. */
  line: number;
  name: string;
  /** `let`, `var`, or what changes the container (e.g. `.set() at line 40`). */
  why: string;
  /** The declaration's doc comment says `Module state by design: ...`. */
  exempt?: true;
}

const EXEMPT_RE = /Module state by design: \S/;

/** Methods that change a Map, Set, WeakMap, WeakSet or array in place. */
const MUTATORS = new Set([
  'set',
  'add',
  'delete',
  'clear',
  'push',
  'pop',
  'shift',
  'unshift',
  'splice',
  'sort',
  'reverse',
  'fill',
  'copyWithin',
]);

/** Functions that write into their first argument (the project's own from src/json.ts, and the built-ins). */
const WRITERS = new Set([
  'Object.assign',
  'Object.defineProperty',
  'Object.defineProperties',
  'Object.setPrototypeOf',
  'Reflect.set',
  'Reflect.defineProperty',
  'Reflect.deleteProperty',
  'setOwn',
  'assignOwn',
  'getOrMake',
]);

/** The CLI edge: the only place module state may live (it holds the process). */
export function isCliEdge(file: string, srcDir: string): boolean {
  const rel = relative(srcDir, file).split(sep).join('/');
  return rel === 'cli.ts' || rel.startsWith('cli/');
}

/** The expression under `as`, `satisfies`, `!` and parentheses. */
function bare(e: ts.Expression): ts.Expression {
  let x = e;
  while (
    ts.isAsExpression(x) ||
    ts.isSatisfiesExpression(x) ||
    ts.isParenthesizedExpression(x) ||
    ts.isNonNullExpression(x) ||
    ts.isTypeAssertionExpression(x)
  )
    x = x.expression;
  return x;
}

const CONTAINERS = new Set(['Map', 'Set', 'WeakMap', 'WeakSet', 'Array']);

/** Whether `e` makes a fresh container (a collection, an array or object literal). */
function isContainer(e: ts.Expression): boolean {
  const x = bare(e);
  if (ts.isArrayLiteralExpression(x) || ts.isObjectLiteralExpression(x)) return true;
  return ts.isNewExpression(x) && ts.isIdentifier(x.expression) && CONTAINERS.has(x.expression.text);
}

const ASSIGNMENTS = new Set([
  ts.SyntaxKind.EqualsToken,
  ts.SyntaxKind.PlusEqualsToken,
  ts.SyntaxKind.MinusEqualsToken,
  ts.SyntaxKind.AsteriskEqualsToken,
  ts.SyntaxKind.SlashEqualsToken,
  ts.SyntaxKind.PercentEqualsToken,
  ts.SyntaxKind.AsteriskAsteriskEqualsToken,
  ts.SyntaxKind.LessThanLessThanEqualsToken,
  ts.SyntaxKind.GreaterThanGreaterThanEqualsToken,
  ts.SyntaxKind.GreaterThanGreaterThanGreaterThanEqualsToken,
  ts.SyntaxKind.AmpersandEqualsToken,
  ts.SyntaxKind.BarEqualsToken,
  ts.SyntaxKind.CaretEqualsToken,
  ts.SyntaxKind.AmpersandAmpersandEqualsToken,
  ts.SyntaxKind.BarBarEqualsToken,
  ts.SyntaxKind.QuestionQuestionEqualsToken,
]);

/** What changes the container named by reference `id` there, or undefined when this reference only reads. */
function mutationAt(id: ts.Identifier): string | undefined {
  // Climb the accesses of which the reference is the object: `x`, `x.a`, `x[k].b`.
  let n: ts.Expression = id;
  for (;;) {
    const p: ts.Node = n.parent;
    if ((ts.isPropertyAccessExpression(p) || ts.isElementAccessExpression(p)) && p.expression === n) n = p;
    else if (
      (ts.isParenthesizedExpression(p) || ts.isNonNullExpression(p) || ts.isAsExpression(p)) &&
      p.expression === n
    )
      n = p;
    else break;
  }
  const p = n.parent;
  if (n !== id) {
    if (ts.isBinaryExpression(p) && p.left === n && ASSIGNMENTS.has(p.operatorToken.kind)) return 'an assignment';
    if ((ts.isPrefixUnaryExpression(p) || ts.isPostfixUnaryExpression(p)) && p.operand === n) {
      const op = p.operator;
      if (op === ts.SyntaxKind.PlusPlusToken || op === ts.SyntaxKind.MinusMinusToken) return 'an increment';
    }
    if (ts.isDeleteExpression(p) && p.expression === n) return 'a delete';
    if (ts.isCallExpression(p) && p.expression === n && ts.isPropertyAccessExpression(n) && MUTATORS.has(n.name.text))
      return `.${n.name.text}()`;
  }
  // Passed (itself or a part) first to a writer.
  if (ts.isCallExpression(p) && p.arguments[0] === n && WRITERS.has(p.expression.getText())) {
    return `${p.expression.getText()}()`;
  }
  return undefined;
}

/** The doc comments before a top-level statement. */
function leadingComments(stmt: ts.Statement, sf: ts.SourceFile): string {
  const text = sf.getFullText();
  return (ts.getLeadingCommentRanges(text, stmt.getFullStart()) ?? []).map((r) => text.slice(r.pos, r.end)).join('\n');
}

/** The module state of one source text (`file` names it in the findings). */
export function moduleStateOf(file: string, text: string): ModuleState[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lineOf = (n: ts.Node) => sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
  const found: ModuleState[] = [];
  const watched = new Map<string, { decl: ts.VariableDeclaration; stmt: ts.Statement }>();
  for (const stmt of sf.statements) {
    if (!ts.isVariableStatement(stmt)) continue;
    const list = stmt.declarationList;
    const kind =
      list.flags & ts.NodeFlags.Let
        ? 'let'
        : list.flags & (ts.NodeFlags.Const | ts.NodeFlags.Using | ts.NodeFlags.AwaitUsing)
          ? 'const'
          : 'var';
    const exempt = EXEMPT_RE.test(leadingComments(stmt, sf));
    for (const decl of list.declarations) {
      if (kind !== 'const') {
        found.push({
          file,
          line: lineOf(decl),
          name: decl.name.getText(sf),
          why: kind,
          ...(exempt ? { exempt: true as const } : {}),
        });
      } else if (ts.isIdentifier(decl.name) && decl.initializer && isContainer(decl.initializer)) {
        watched.set(decl.name.text, { decl, stmt });
      }
    }
  }
  const reported = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) && !reported.has(node.text)) {
      const w = watched.get(node.text);
      const why = w && node !== w.decl.name ? mutationAt(node) : undefined;
      if (w && why !== undefined) {
        reported.add(node.text);
        const exempt = EXEMPT_RE.test(leadingComments(w.stmt, sf));
        found.push({
          file,
          line: lineOf(w.decl),
          name: node.text,
          why: `${why} at line ${lineOf(node)}`,
          ...(exempt ? { exempt: true as const } : {}),
        });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found.sort((a, b) => a.line - b.line);
}

/** The module state of the given files. */
export function moduleState(files: readonly string[]): ModuleState[] {
  return files.flatMap((f) => moduleStateOf(f, readFileSync(f, 'utf8')));
}

/** The source files under `srcDir` outside the CLI edge (generated files left out, as `sourceFiles` does). */
export function coreFiles(srcDir: string): string[] {
  return sourceFiles(srcDir).filter((f) => !isCliEdge(f, srcDir));
}

const isMain = process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/'));
if (isMain) {
  const dirs = process.argv.slice(2);
  const found = moduleState((dirs.length ? dirs : ['src']).flatMap(coreFiles));
  for (const f of found) console.log(`${f.file}:${f.line}  ${f.name}  ${f.why}${f.exempt ? '  [exempt]' : ''}`);
  const open = found.filter((f) => !f.exempt);
  console.log(`${found.length} module-level states, ${open.length} not exempt`);
  process.exitCode = open.length > 0 ? 1 : 0;
}
