#!/usr/bin/env node
// A maintainers' tool: re-imports third-party test data into a data folder outside the repository (the folder
// the tests read through MESHINJECT_TEST_DATA, ../shared by default; see docs/internals/test-data.md). The
// repository holds only what this project wrote, so the tool refuses to write inside it.
//
//   npm run import-test-data -- refresh <corpus> --from <upstream git dir or checkout> --into <data dir> [--commit REV]
//       Re-reads every case of <data dir>/conformance/<corpus> (istio, linkerd, kuma) from the upstream
//       repository: the input and golden files that each case.yaml `source` names are taken byte for byte
//       at REV (default: the commit pinned in the corpus's SOURCE.md) and written over input.yaml and
//       expected.yaml. Derived parts stay as they are: a document the corpus puts before the upstream file
//       (Kuma's Namespace), expected-error.txt, fn-config.yaml, case.yaml, and cases whose source is not an
//       upstream file (a Go literal, a hand-derived expectation). The summary lists every changed file.
//   npm run import-test-data -- copy --from <dir> --into <data dir> [--only <sub-path> ...]
//       Replaces <data dir>/<sub-path> (default: conformance, real-world, krm-inputs) with the folders
//       of the same name in <dir>, a tree laid out like the data folder (a corpus builder's output). Every
//       corpus must bring its SOURCE.md (or README.md).
//
// Istio release corpora (conformance/istio-versions/<tag>) are built from a release tag by their own builder
// (scripts/import-istio-release.mjs, see the README).
//
// Exit codes: 0 done (the summary says what changed), 2 usage or a missing upstream file/commit.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, posix, relative, resolve, isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('..', import.meta.url));
/** The data folder written (--into). */
let VENDORED = '';
const DEFAULT_COPY = ['conformance', 'real-world', 'krm-inputs'];

/**
 * Per corpus: the upstream repository as case.yaml names it, and how many leading documents of
 * input.yaml/expected.yaml the corpus adds before the upstream file (Kuma: the test's Namespace).
 */
const CORPORA = {
  istio: { repo: 'istio/istio', leadingDocs: 0 },
  linkerd: { repo: 'linkerd/linkerd2', leadingDocs: 0 },
  kuma: { repo: 'kumahq/kuma', leadingDocs: 1 },
};

/** Prints `message` on stderr and exits 2. */
function fail(message) {
  process.stderr.write(`import-test-data: ${message}\n`);
  process.exit(2);
}

/** Parses `argv` into {command, positional[], from, commit, only[]}; unknown options are a usage error. */
function parseArgs(argv) {
  const out = { command: argv[0], positional: [], only: [] };
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--from' || a === '--commit' || a === '--only' || a === '--into') {
      if (argv[i + 1] === undefined) fail(`${a} needs a value`);
      if (a === '--only') out.only.push(argv[++i]);
      else out[a.slice(2)] = argv[++i];
    } else if (a.startsWith('-')) fail(`unknown option ${a}`);
    else out.positional.push(a);
  }
  return out;
}

/** The commit pinned in a corpus's SOURCE.md (its `| commit | \`<sha>\`` row), or undefined. */
function pinnedCommit(corpusDir) {
  const source = join(corpusDir, 'SOURCE.md');
  if (!existsSync(source)) return undefined;
  return /\|\s*commit\s*\|\s*`([0-9a-f]{7,40})`/.exec(readFileSync(source, 'utf8'))?.[1];
}

/**
 * A reader of upstream files: from a git directory (or a checkout's .git) at `commit` when one is given
 * or pinned, else from the checkout's working tree. Returns `(path) => Buffer | undefined`.
 */
function upstreamReader(from, commit) {
  const gitDir = existsSync(join(from, '.git'))
    ? join(from, '.git')
    : existsSync(join(from, 'HEAD'))
      ? from
      : undefined;
  if (commit && gitDir) {
    try {
      execFileSync('git', ['--git-dir', gitDir, 'cat-file', '-e', `${commit}^{commit}`], { stdio: 'ignore' });
    } catch {
      fail(`commit ${commit} is not in ${from} (fetch it, or pass --commit)`);
    }
    return (path) => {
      try {
        return execFileSync('git', ['--git-dir', gitDir, 'show', `${commit}:${path}`], {
          maxBuffer: 1 << 28,
          stdio: ['ignore', 'pipe', 'ignore'],
        });
      } catch {
        return undefined;
      }
    };
  }
  if (commit && !gitDir)
    process.stderr.write(
      `import-test-data: ${from} is not a git repository: reading its files as they are, not at ${commit}\n`,
    );
  return (path) => (existsSync(join(from, path)) ? readFileSync(join(from, path)) : undefined);
}

/**
 * The upstream input path and the candidate golden paths a case.yaml `source` names, as
 * `<repo> <input path> -> <golden>`: the golden is relative to the input's folder or one of its ancestors
 * (Linkerd's `inject-filepath/expected/...` is relative to the test's testdata folder). Undefined for a
 * derived case (a Go literal, a hand-derived expectation).
 */
function sourcePaths(caseYaml, repo) {
  const line = /^source:\s*(["'])(.*)\1\s*$/m.exec(caseYaml)?.[2];
  const m = line && new RegExp(`^${repo.replace('/', '\\/')} (\\S+) -> (\\S+)`).exec(line);
  if (!m || !/\.(ya?ml|golden|injected|input)\b/.test(m[1])) return undefined;
  const goldens = [];
  for (let dir = posix.dirname(m[1]); dir !== '.' && dir !== '/'; dir = posix.dirname(dir))
    goldens.push(posix.join(dir, m[2]));
  return { input: m[1], goldens: m[2] === 'error' ? [] : goldens };
}

/** The first `count` documents of `text` with their trailing `---` line (the corpus's own prefix). */
function leadingDocuments(text, count) {
  let at = 0;
  for (let i = 0; i < count; i++) {
    const sep = text.indexOf('\n---\n', at);
    if (sep < 0) return undefined;
    at = sep + 5;
  }
  return text.slice(0, at);
}

/** Writes `upstream` (with the current file's leading documents kept) to `file`; returns whether it changed. */
function writeCaseFile(file, upstream, leadingDocs) {
  const old = readFileSync(file);
  let next = upstream;
  if (leadingDocs > 0) {
    const prefix = leadingDocuments(old.toString('utf8'), leadingDocs);
    if (prefix === undefined) return 'kept';
    next = Buffer.concat([Buffer.from(prefix, 'utf8'), upstream]);
  }
  if (old.equals(next)) return 'unchanged';
  writeFileSync(file, next);
  return 'updated';
}

/** Refreshes one corpus's inputs and goldens from upstream; prints a line per changed case and a summary. */
function refresh(corpus, from, commitArg) {
  const spec = CORPORA[corpus] ?? fail(`unknown corpus ${corpus}: one of ${Object.keys(CORPORA).join(', ')}`);
  const dir = join(VENDORED, 'conformance', corpus);
  const commit = commitArg ?? pinnedCommit(dir);
  const read = upstreamReader(from, commit);
  const counts = { updated: 0, unchanged: 0, kept: 0, missing: 0 };
  for (const name of readdirSync(join(dir, 'cases')).sort()) {
    const caseDir = join(dir, 'cases', name);
    const paths = sourcePaths(readFileSync(join(caseDir, 'case.yaml'), 'utf8'), spec.repo);
    if (!paths) {
      counts.kept++;
      continue;
    }
    const files = [['input.yaml', [paths.input]]];
    if (paths.goldens.length > 0 && existsSync(join(caseDir, 'expected.yaml')))
      files.push(['expected.yaml', paths.goldens]);
    for (const [file, candidates] of files) {
      const path = candidates.find((p) => read(p) !== undefined) ?? candidates[0];
      const upstream = read(path);
      if (!upstream) {
        counts.missing++;
        process.stderr.write(`${name}: ${path} is not upstream${commit ? ` at ${commit}` : ''}\n`);
        continue;
      }
      const outcome = writeCaseFile(join(caseDir, file), upstream, spec.leadingDocs);
      counts[outcome]++;
      if (outcome === 'updated') process.stdout.write(`${name}/${file}: updated from ${path}\n`);
    }
  }
  process.stdout.write(
    `${corpus}${commit ? ` at ${commit}` : ''}: ${counts.updated} file(s) updated, ${counts.unchanged} unchanged, ${counts.kept} derived case(s) kept, ${counts.missing} missing upstream\n`,
  );
  if (commitArg && commitArg !== pinnedCommit(dir))
    process.stdout.write(`now update the commit row of ${join(dir, 'SOURCE.md')} to ${commitArg}\n`);
  if (counts.missing > 0) process.exitCode = 2;
}

/** The SOURCE.md or README.md of a corpus folder, or undefined. */
function sourceNote(dir) {
  return ['SOURCE.md', 'README.md'].map((f) => join(dir, f)).find((f) => existsSync(f));
}

/**
 * Replaces the data folder's folders named by `only` with those of `from`. Every corpus must say where its data
 * comes from: its own SOURCE.md or README.md, or the data folder's SOURCE.md, which is then kept.
 */
function copy(from, only) {
  const parts = only.length > 0 ? only : DEFAULT_COPY;
  const keep = new Map(); // the data folder's SOURCE.md path -> its text, for corpora that arrive without one
  for (const part of parts) {
    const src = join(from, part);
    if (!existsSync(src) || !statSync(src).isDirectory()) fail(`${src} is not a folder`);
    const corpora = part === 'conformance' ? readdirSync(src).map((c) => join(part, c)) : [part];
    for (const corpus of corpora) {
      if (sourceNote(join(from, corpus))) continue;
      const ours = join(VENDORED, corpus, 'SOURCE.md');
      if (!existsSync(ours))
        fail(`${join(from, corpus)} has no SOURCE.md or README.md: say where its data comes from first`);
      keep.set(ours, readFileSync(ours));
    }
  }
  for (const part of parts) {
    rmSync(join(VENDORED, part), { recursive: true, force: true });
    cpSync(join(from, part), join(VENDORED, part), { recursive: true });
    process.stdout.write(`${join(VENDORED, part)}: replaced from ${join(from, part)}\n`);
  }
  for (const [file, text] of keep) writeFileSync(file, text);
}

const USAGE =
  'usage: import-test-data refresh <corpus> --from <upstream> --into <data dir> [--commit REV] | copy --from <dir> --into <data dir> [--only <sub-path>]';
const args = parseArgs(process.argv.slice(2));
if (!args.from || !args.into) fail(USAGE);
VENDORED = resolve(args.into);
const inRepo = relative(REPO, VENDORED);
if (!inRepo || (!inRepo.startsWith('..') && !isAbsolute(inRepo)))
  fail(`--into ${args.into} is inside the repository: third-party data lives outside it (docs/internals/test-data.md)`);
if (args.command === 'refresh' && args.positional.length === 1) refresh(args.positional[0], args.from, args.commit);
else if (args.command === 'copy' && args.positional.length === 0) copy(args.from, args.only);
else fail(USAGE);
