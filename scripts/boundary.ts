/**
 * The boundary between the core and the mesh drivers (issue #22), checked on the sources:
 * - no mesh is named in code outside `src/drivers/<mesh>/`, the registry (`src/drivers/registry.ts`) and the
 *   package's export barrel (`src/index.ts`); comments are not code and may name a mesh (the source of a rule);
 * - imports follow the layering of the README's "Reading the code": the core imports neither `src/drivers/`
 *   nor the CLI; the template engines (`src/render/`) import neither `src/selection/`, the driver contract nor
 *   `src/drivers/`; the Go template engine (`src/render/gotemplate/`) does not import the sidecar plans
 *   (`src/render/plan*.ts`, `src/render/go-plan-rules.ts`: the plans hook into the engine, not the other way);
 *   the YAML stages import one way: `src/edit/` → `src/yaml/read/`, `src/yaml/emit/` → `src/yaml/scalars.ts`;
 *   and no two folders import each other (directly or round a longer cycle).
 *
 * Usage: `node --import tsx scripts/boundary.ts` prints one line per violation; exit 1 when there is one.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import ts from 'typescript';
import { sourceFiles } from './long-functions.ts';

/**
 * Names of service meshes, as words in code (case-insensitive). `osm`/`fsm` only as whole words (`osm-system`,
 * `fsm.flomesh.io`), so that words such as "cosmos" do not count.
 */
export const MESH_NAME = /istio|linkerd|kuma|consul|openservicemesh|flomesh|cilium|traefik mesh|\b(?:osm|fsm)\b/i;

/** One line of code naming a mesh outside the drivers. */
export interface MeshNameHit {
  /** Path relative to `src/`, `/`-separated. */
  file: string;
  line: number;
  text: string;
}

/** One import against the layering. */
export interface ImportViolation {
  file: string;
  line: number;
  /** The imported module, relative to `src/`. */
  target: string;
  rule: string;
}

const posix = (p: string): string => p.split(sep).join('/');

/** True for the files that may name a mesh: a driver's own folder, the registry, the export barrel. */
export function mayNameMeshes(file: string): boolean {
  return /^drivers\/[^/]+\//.test(file) || file === 'drivers/registry.ts' || file === 'index.ts';
}

/** The leaf tokens of a source file outside comments (JSDoc nodes skipped), with their lines. */
function codeTokens(sf: ts.SourceFile): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = [];
  const visit = (node: ts.Node): void => {
    if (node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode) return;
    const kids = node.getChildren(sf);
    if (kids.length === 0) {
      // A token over several lines (a template literal's text) counts line by line.
      const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
      for (const [i, text] of node.getText(sf).split('\n').entries()) out.push({ line: first + i, text });
      return;
    }
    for (const k of kids) visit(k);
  };
  visit(sf);
  return out;
}

/**
 * The lines of code (comments aside) that name a mesh, in files that may not.
 * @param root the `src` folder; `files` are paths under it
 */
export function meshNamesInCore(root: string, files: readonly string[]): MeshNameHit[] {
  const out: MeshNameHit[] = [];
  for (const path of files) {
    const file = posix(relative(root, path));
    if (mayNameMeshes(file)) continue;
    const text = readFileSync(path, 'utf8');
    const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
    const lines = text.split('\n');
    const seen = new Set<number>();
    for (const tok of codeTokens(sf)) {
      if (!MESH_NAME.test(tok.text) || seen.has(tok.line)) continue;
      seen.add(tok.line);
      out.push({ file, line: tok.line, text: lines[tok.line - 1]!.trim() });
    }
  }
  return out;
}

/**
 * The layer group of a module (path relative to `src/`): `cli` (the edge: `cli.ts`, `cli/`), `root` (the
 * composition: `run.ts` and `run/` bind the registry, `index.ts` is the export barrel), `drivers` (the registry and the
 * mesh folders), `engines` (`render/`), or `core` (everything else, the driver contract included).
 */
export function layerOf(file: string): 'cli' | 'root' | 'drivers' | 'engines' | 'core' {
  if (file === 'cli.ts' || file.startsWith('cli/')) return 'cli';
  if (file === 'run.ts' || file.startsWith('run/') || file === 'index.ts') return 'root';
  if (file.startsWith('drivers/')) return 'drivers';
  if (file.startsWith('render/')) return 'engines';
  return 'core';
}

/** The folder of a module for the cycle check: its first path segment (`pipeline.ts` is a folder of its own). */
function folderOf(file: string): string {
  return file.includes('/') ? file.slice(0, file.indexOf('/')) : file.replace(/\.ts$/, '');
}

/** Why `from` may not import `to` (paths relative to `src/`), or undefined when it may. */
export function layeringRule(from: string, to: string): string | undefined {
  const a = layerOf(from);
  const b = layerOf(to);
  if ((a === 'core' || a === 'engines') && (b === 'drivers' || b === 'cli' || b === 'root'))
    return `${a} imports ${b === 'root' ? 'the composition root' : b}`;
  if (a === 'drivers' && (b === 'cli' || b === 'root'))
    return `a driver imports ${b === 'root' ? 'the composition root' : 'the CLI'}`;
  if (a === 'root' && b === 'cli') return 'the composition root imports the CLI';
  if (a === 'engines' && (to.startsWith('selection/') || to.startsWith('contract/')))
    return `a template engine imports ${folderOf(to)}`;
  if (from.startsWith('render/gotemplate/') && /^render\/(plan[^/]*|go-plan-rules)\.ts$/.test(to))
    return 'the Go template engine imports the sidecar plans';
  return yamlStageRule(from, to);
}

/**
 * The stages of YAML text (issue #35): `edit/` (a resource's new text) imports `yaml/read/` and `yaml/emit/`, which
 * import only `yaml/scalars.ts` (the plain-scalar rules both share), never each other nor `edit/`.
 */
function yamlStageRule(from: string, to: string): string | undefined {
  const stage = (f: string): string | undefined =>
    f === 'yaml/scalars.ts' ? 'scalars' : /^yaml\/(read|emit)\//.exec(f)?.[1];
  const a = stage(from);
  if (a === undefined) return undefined;
  const who =
    a === 'emit' ? 'the YAML emitter imports' : a === 'read' ? 'a YAML reader imports' : 'the YAML scalar rules import';
  if (to.startsWith('edit/')) return `${who} the editor`;
  const b = stage(to);
  if (b === undefined || b === a || b === 'scalars') return undefined;
  if (a === 'scalars') return `the YAML scalar rules import the ${b === 'read' ? 'readers' : 'emitter'}`;
  return a === 'read' ? 'a YAML reader imports the emitter' : 'the YAML emitter imports a reader';
}

/** Relative imports and re-exports of a file (static `import`/`export ... from`, and `import()`), with their lines. */
function importsOf(path: string): Array<{ spec: string; line: number }> {
  const sf = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: Array<{ spec: string; line: number }> = [];
  const add = (lit: ts.Node): void => {
    if (ts.isStringLiteral(lit) && lit.text.startsWith('.'))
      out.push({ spec: lit.text, line: sf.getLineAndCharacterOfPosition(lit.getStart(sf)).line + 1 });
  };
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier)
      add(node.moduleSpecifier);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0])
      add(node.arguments[0]);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** Folder cycles of the import graph (strongly connected components of more than one folder), each sorted. */
function folderCycles(edges: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  let next = 0;
  const strong = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    on.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const scc: string[] = [];
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      on.delete(w);
      scc.push(w);
      if (w === v) break;
    }
    if (scc.length > 1) out.push(scc.sort());
  };
  for (const v of edges.keys()) if (!index.has(v)) strong(v);
  return out;
}

/**
 * Imports against the layering, and folder cycles (reported as a violation at each import that closes one).
 * @param root the `src` folder; `files` are paths under it
 */
export function layeringViolations(root: string, files: readonly string[]): ImportViolation[] {
  const out: ImportViolation[] = [];
  const edges = new Map<string, Set<string>>();
  const sites: Array<{ file: string; line: number; target: string }> = [];
  for (const path of files) {
    const file = posix(relative(root, path));
    for (const { spec, line } of importsOf(path)) {
      const target = posix(relative(root, join(dirname(path), spec)));
      const rule = layeringRule(file, target);
      if (rule) out.push({ file, line, target, rule });
      const [a, b] = [folderOf(file), folderOf(target)];
      if (a === b) continue;
      if (!edges.has(a)) edges.set(a, new Set());
      edges.get(a)!.add(b);
      sites.push({ file, line, target });
    }
  }
  for (const cycle of folderCycles(edges)) {
    const inCycle = new Set(cycle);
    for (const s of sites) {
      if (inCycle.has(folderOf(s.file)) && inCycle.has(folderOf(s.target)))
        out.push({ ...s, rule: `folders import each other: ${cycle.join(', ')}` });
    }
  }
  return out;
}

const isMain = process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/'));
if (isMain) {
  const files = sourceFiles('src');
  const names = meshNamesInCore('src', files);
  const imports = layeringViolations('src', files);
  for (const h of names) console.log(`src/${h.file}:${h.line}  names a mesh: ${h.text}`);
  for (const v of imports) console.log(`src/${v.file}:${v.line}  imports ${v.target}: ${v.rule}`);
  console.log(
    `${names.length} code lines name a mesh outside the drivers; ${imports.length} imports against the layering`,
  );
  process.exitCode = names.length + imports.length > 0 ? 1 : 0;
}
