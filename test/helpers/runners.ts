/**
 * Helpers of the runner tests (kpt catalog examples, kustomize overlays, Argo CD plugins, Flux CI): a
 * directory of stand-in executables put first on PATH, copies of example directories, git snapshots.
 * Not a test file itself.
 *
 * Stand-ins, each said where it is used:
 * - `meshinject`: the repository's bin/meshinject.js run by this node, as `npm install -g meshinject`
 *   (or the argocd-cmp image) puts it on PATH.
 * - `docker`: there is no container engine on these machines. kpt and kustomize run a container function
 *   as `docker run --rm -i ... IMAGE`; the stand-in records its arguments and stdin and runs
 *   bin/meshinject.js on that stdin in place of the image (krm-ecosystem.md §7.3). `docker version` answers so that kpt's check passes.
 * - `kustomize`: the standalone binary is not on these machines; the wrapper runs `kubectl kustomize`
 *   (kustomize v5.5), which builds the same plain overlays.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, ROOT, runTool, type Ran } from './e2e.ts';

/** Single-quotes a string for sh. */
export function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** A directory of stand-in executables (see the file comment); `env` has it first on PATH. */
export interface StandIns {
  bin: string;
  /** File to which the stand-in docker appends one line per call (its arguments). */
  dockerLog: string;
  /** What the last `docker run` read on stdin (the ResourceList the runner sent). */
  dockerStdin: string;
  env: NodeJS.ProcessEnv;
}

/**
 * Copies the installed program (bin/, dist/, package.json: the bundle needs nothing else) to `dir/meshinject`, as
 * `npm install -g` lays it out, and returns the path of its bin. For runs as another user (Argo CD's uid 999): the
 * clone may sit in a folder only its owner can enter (`mktemp -d` makes 0700), so the other user runs a copy in a
 * folder of the test's own with modes it sets (0755 folders, 0644 files, 0755 for the bin).
 */
export function installCopy(dir: string): string {
  const dest = join(dir, 'meshinject');
  for (const part of ['bin', 'dist', 'package.json']) cpSync(join(ROOT, part), join(dest, part), { recursive: true });
  const open = (p: string): void => {
    if (statSync(p).isDirectory()) {
      chmodSync(p, 0o755);
      for (const name of readdirSync(p)) open(join(p, name));
    } else chmodSync(p, p.endsWith('.js') ? 0o755 : 0o644);
  };
  chmodSync(dir, 0o755);
  open(dest);
  return join(dest, 'bin/meshinject.js');
}

/**
 * Writes the stand-ins under `dir/bin`; `extra` adds more executables (name -> sh script body); `entry` is the
 * meshinject bin they run (default: the repository's, bin/meshinject.js).
 */
export function makeStandIns(dir: string, extra: Record<string, string> = {}, entry: string = BIN): StandIns {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const dockerLog = join(dir, 'docker-calls.txt');
  const dockerStdin = join(dir, 'docker-stdin.yaml');
  const node = shQuote(process.execPath);
  const scripts: Record<string, string> = {
    // NODE_OPTIONS: tap's process tracking adds itself there; the meshinject a user's PATH runs has none.
    meshinject: `unset NODE_OPTIONS; exec ${node} ${shQuote(entry)} "$@"`,
    docker: [
      `printf '%s\\n' "$*" >> ${shQuote(dockerLog)}`,
      'case "$1" in',
      '  version) echo 24.0.0-stand-in ;;',
      `  run) cat > ${shQuote(dockerStdin)}; unset NODE_OPTIONS; exec ${node} ${shQuote(entry)} < ${shQuote(dockerStdin)} ;;`,
      '  *) echo "stand-in docker: unexpected: $*" >&2; exit 1 ;;',
      'esac',
    ].join('\n'),
    kustomize: [
      '# stand-in for the standalone kustomize: `kustomize build DIR` is `kubectl kustomize DIR`',
      'if [ "$1" = build ]; then shift; exec kubectl kustomize "$@"; fi',
      'echo "stand-in kustomize: only build is supported" >&2; exit 1',
    ].join('\n'),
    ...extra,
  };
  for (const [name, body] of Object.entries(scripts)) {
    const file = join(bin, name);
    writeFileSync(file, `#!/bin/sh\n${body}\n`);
    chmodSync(file, 0o755);
  }
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` };
  delete env.LOG_TO_STDERR;
  return { bin, dockerLog, dockerStdin, env };
}

/** Runs a command with an explicit environment (the stand-ins' PATH); throws only when it cannot start. */
export function runWith(
  cmd: string,
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; input?: string },
): Ran {
  const r = spawnSync(cmd, args, {
    cwd: opts.cwd,
    env: opts.env,
    input: opts.input ?? '',
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Copies an example directory (dot files included) to `dest`. */
export function copyExample(src: string, dest: string): void {
  cpSync(src, dest, { recursive: true });
}

/** Makes every file and directory under `dir` read-only (as Argo CD's repo checkout is to a plugin). */
export function makeReadOnly(dir: string): void {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) makeReadOnly(p);
    else chmodSync(p, 0o444);
  }
  chmodSync(dir, 0o555);
}

/** Makes `dir` writable again (for cleanup). */
export function makeWritable(dir: string): void {
  chmodSync(dir, 0o755);
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) makeWritable(p);
    else chmodSync(p, 0o644);
  }
}

/** git in `dir` with a fixed identity; `init` makes a repository with everything committed. */
export function git(dir: string, ...args: string[]): Ran {
  return runTool(
    'git',
    ['-c', 'user.email=e2e@example.com', '-c', 'user.name=e2e', '-c', 'commit.gpgsign=false', ...args],
    { cwd: dir },
  );
}

/** `git init` + commit of everything in `dir`. */
export function gitSnapshot(dir: string): void {
  for (const a of [
    ['init', '-q', '.'],
    ['add', '-A'],
    ['commit', '-q', '-m', 'original'],
  ]) {
    const r = git(dir, ...a);
    if (r.status !== 0) throw new Error(`git ${a.join(' ')}: ${r.stderr}`);
  }
}

/** The diff of `dir` against its snapshot, new and deleted files included (`git add -A; git diff --cached`). */
export function gitDiff(dir: string): string {
  git(dir, 'add', '-A');
  return git(dir, 'diff', '--cached', '--no-color', '--no-ext-diff').stdout;
}
