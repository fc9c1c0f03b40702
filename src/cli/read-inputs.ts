/**
 * Reading what a run reads: files, directories and stdin, within the size budget (`--max-input-bytes`) and the
 * root (src/cli/paths.ts), as UTF-8 text; each file read is recorded for the aliasing check (`Session.reads`).
 */
import { isAscii } from 'node:buffer';
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, statSync } from 'node:fs';
import type { RunInput } from '../run.ts';
import { COMMANDS, suggest } from './args.ts';
import { readIdentity } from './file-identity.ts';
import { fsMessage, fsPath, isStream, manifestFiles, onPath, rawNameOf, resolveReadable } from './paths.ts';
import { CliError, type Session } from './session.ts';

const UTF8 = new TextDecoder('utf-8', { fatal: true });

function sizeText(n: number): string {
  for (const [unit, f] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const)
    if (n >= f && n % f === 0) return `${n / f} ${unit}`;
  return `${n} bytes`;
}

function tooLarge(s: Session, label: string): CliError {
  return new CliError(`${label}: input larger than the limit of ${sizeText(s.budgetTotal)} (--max-input-bytes)`);
}

/**
 * Reads a file descriptor to its end, at most `budget` bytes (a regular file's size is checked first).
 * Works for pipes, FIFOs and devices (`/dev/zero` stops at the limit); a non-blocking stdin is polled.
 * A regular file is read into one buffer of its size and a byte more (to see that it ended), and that buffer
 * is the result: no copy; what does not fit (a stream, a file that grew) is read in 1 MiB chunks, joined once.
 */
function readFd(s: Session, fd: number, label: string): Buffer {
  const st = fstatSync(fd);
  if (st.isDirectory()) throw new CliError(`${label}: is a directory, not a file or a stream`);
  if (st.isFile() && st.size > s.budget) throw tooLarge(s, label);
  const chunks: Buffer[] = [];
  let total = 0;
  let chunk = Buffer.allocUnsafe(st.isFile() && st.size > 0 ? st.size + 1 : 1 << 20);
  let used = 0;
  for (;;) {
    if (used === chunk.length) {
      chunks.push(chunk);
      chunk = Buffer.allocUnsafe(1 << 20);
      used = 0;
    }
    let n: number;
    try {
      n = readSync(fd, chunk, used, chunk.length - used, null);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
        continue;
      }
      if (code === 'EOF') break;
      throw e;
    }
    if (n === 0) break;
    total += n;
    used += n;
    if (total > s.budget) throw tooLarge(s, label);
  }
  s.budget -= total;
  const last = chunk.subarray(0, used);
  if (chunks.length === 0) return last;
  chunks.push(last);
  return Buffer.concat(chunks, total);
}

/** Standard input (`io.stdin`): a file descriptor is read by `readFd`; given bytes are checked against the budget. */
function readStdin(s: Session): Buffer {
  const { stdin } = s.io;
  if (typeof stdin === 'number') {
    s.reads.push(readIdentity(stdin, 'stdin'));
    const bytes = readFd(s, stdin, 'stdin');
    s.stdinBytes = bytes;
    return bytes;
  }
  if (stdin.length > s.budget) throw tooLarge(s, 'stdin');
  s.budget -= stdin.length;
  return Buffer.from(stdin.buffer, stdin.byteOffset, stdin.length);
}

/**
 * Reads a file (or stdin for `-`) as UTF-8 within the size budget; invalid UTF-8 is an error. The file must
 * resolve inside the root (`src/cli/paths.ts`) unless `anywhere` (a `--platform-config` file); it is opened
 * by its resolved path, without following a link put there since.
 */
export function readText(s: Session, path: string, label = path, anywhere = false): string {
  let bytes: Buffer;
  if (path === '-') bytes = readStdin(s);
  else {
    let fd: number;
    const open = anywhere || isStream(s.confinement, path) ? path : resolveReadable(s.confinement, path, label);
    try {
      fd =
        open === path
          ? onPath(s.confinement, path, (p) => openSync(p, constants.O_RDONLY))
          : openSync(open, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch (e) {
      throw new CliError(fsMessage(label, e));
    }
    try {
      s.reads.push(readIdentity(fd, label === path ? `the input ${path}` : label, fsPath(s.confinement, open)));
      bytes = readFd(s, fd, label);
    } catch (e) {
      if (e instanceof CliError) throw e;
      throw new CliError(fsMessage(label, e));
    } finally {
      closeSync(fd);
    }
  }
  // ASCII (most manifests) reads the same as Latin-1, which makes the string without decoding UTF-8.
  if (isAscii(bytes)) return bytes.toString('latin1');
  try {
    return UTF8.decode(bytes);
  } catch {
    throw new CliError(`${label}: not valid UTF-8 (YAML and Kubernetes manifests must be UTF-8)`);
  }
}

/**
 * The inputs named on the command line, read: files, directories (expanded; with `manifestsOnly`, the files
 * read from a directory are marked so, see `RunInput.manifestsOnly`), `-` for stdin. A package's own files in
 * a directory (`PACKAGE_FILES`) are pushed to `leftOut`.
 */
export function readInputs(
  s: Session,
  paths: readonly string[],
  manifestsOnly: boolean,
  leftOut: Array<{ path: string; why: string }>,
): RunInput[] {
  const inputs: RunInput[] = [];
  let stdinUsed = false;
  for (const p of paths.length ? paths : ['-']) {
    if (p === '-') {
      if (stdinUsed) throw new CliError("'-' (stdin) is given twice");
      stdinUsed = true;
      inputs.push({ text: readText(s, '-') });
      continue;
    }
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(p)) {
      throw new CliError(
        `${p}: URLs are not read (meshinject works offline); download it first, e.g. curl -fsSL '${p}' | meshinject -`,
      );
    }
    let st: ReturnType<typeof statSync>;
    try {
      st = onPath(s.confinement, p, (q) => statSync(q));
    } catch (e) {
      if (
        (e as NodeJS.ErrnoException).code === 'ENOENT' &&
        lstatSync(fsPath(s.confinement, p), { throwIfNoEntry: false })?.isSymbolicLink()
      ) {
        throw new CliError(`${p}: a dangling symbolic link (its target does not exist)`);
      }
      const raw = rawNameOf(p, s.confinement);
      if (raw !== undefined)
        throw new CliError(`${raw}: the name is not valid UTF-8 (bytes shown as \\xNN); rename it`);
      // A mistyped subcommand (`meshinject chek`) is read as a file name: say what was probably meant.
      const meant = !inputs.length && /^[a-z]+$/.test(p) ? suggest(p, COMMANDS) : undefined;
      throw new CliError(`${fsMessage(p, e)}${meant ? ` (did you mean meshinject ${meant}?)` : ''}`);
    }
    if (st.isDirectory()) {
      const files = manifestFiles(s.confinement, p, leftOut);
      if (files.length === 0)
        throw new CliError(`${p}: a directory without manifests (no *.yaml, *.yml or *.json files)`);
      for (const f of files)
        inputs.push({ name: f, text: readText(s, f), ...(manifestsOnly ? { manifestsOnly } : {}) });
    } else {
      inputs.push({ name: p, text: readText(s, p) });
    }
  }
  return inputs;
}
