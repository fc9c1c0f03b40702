import {
  lstatSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  accessSync,
  constants,
  type Dirent,
  type Stats,
} from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';

/**
 * Where a run may read and write (issues #19 and #20), at the CLI edge. The rule is kustomize's load
 * restrictor (`LoadRestrictionsRootOnly`, kustomize api/loader/loadrestrictions.go: a file outside the
 * kustomization root is refused): every path a run opens must resolve, after symbolic links, inside the root,
 * else the run stops with exit 2 naming the path as it was given (never its target, never its content).
 *
 * - `--root DIR`: the root is DIR, for every path (inputs, files found in directories, `--config`, the
 *   istioctl file flags, `--report` and `--output-file`).
 * - Without it, a file found inside a directory given as input must resolve inside that directory. Under
 *   Argo CD (`ARGOCD_APP_NAME` set), where a tenant chooses paths through the Application (`ARGOCD_ENV_*`),
 *   the paths named on the command line must also resolve inside the current directory (argocd-cmp-server
 *   runs the plugin in the application's directory) or the folder of an input given; on a plain command
 *   line they are read as named, since whoever types the command chooses them.
 * - `--load-restrictor LoadRestrictionsNone`: no root (kustomize's spelling).
 * - `--platform-config FILE`: a functionConfig layer the platform provides (the Argo CD plugin's central file);
 *   read wherever it is.
 *
 * Directory entries are read as bytes, so a name that is not UTF-8 is found and reported, not mistaken for a
 * missing file; dangling links, link loops and entries that are not regular files are errors naming them.
 */

/** An error for the user: one line on stderr, exit 2, nothing on stdout. */
export class PathError extends Error {}

/** kustomize's `--load-restrictor` values (kustomize api/types/loadrestrictions.go). */
export const LOAD_RESTRICTORS = ['LoadRestrictionsRootOnly', 'LoadRestrictionsNone'] as const;
export type LoadRestrictor = (typeof LOAD_RESTRICTORS)[number];

/** The roots of a run: real paths (links resolved); `none` when nothing is confined. */
export interface Confinement {
  none: boolean;
  /** Roots for the paths named on the command line. */
  named: readonly string[];
  /** Paths named on the command line are read as named (a plain command line: its author chose them). */
  namedFree?: boolean;
  /** Explicit `--root` (real path), which also confines what directories hold. */
  explicit?: string;
  /** How the root came about, for messages. */
  label: string;
  /** The run's working directory (absolute): relative paths are opened from it (`fsPath`). */
  cwd: string;
}

/**
 * The path the file system is given for `path` as named: a relative one is taken from the run's working
 * directory, joined as text (not normalised: `link/../x` still goes through `link`, as the kernel would
 * resolve it from that directory). `''` stays `''` (no such file).
 */
export function fsPath(c: Pick<Confinement, 'cwd'>, path: string): string {
  return path === '' || isAbsolute(path) ? path : `${c.cwd}${c.cwd.endsWith(sep) ? '' : sep}${path}`;
}

/**
 * Runs a file system call on `fsPath(c, path)`; an error it throws names `path` as given (Node quotes the
 * path it was handed in `message`), so messages read as they would from that directory.
 */
export function onPath<T>(c: Pick<Confinement, 'cwd'>, path: string, call: (full: string) => T): T {
  const full = fsPath(c, path);
  try {
    return call(full);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (full !== path && err && typeof err.message === 'string') {
      err.message = err.message.split(`'${full}'`).join(`'${path}'`);
      if (err.path === full) err.path = path;
    }
    throw e;
  }
}

/** A file system error in the user's terms, naming `path` as given. */
export function fsMessage(path: string, e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  const what: Record<string, string> = {
    ENOENT: 'no such file or directory',
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    EISDIR: 'is a directory',
    ENOTDIR: 'a part of the path is not a directory',
    ELOOP: 'a symbolic link loop (too many levels of symbolic links)',
    EMFILE: 'too many open files',
    ENOSPC: 'no space left on device',
    EDQUOT: 'disk quota exceeded',
    EFBIG: 'file too large (the file size limit, ulimit -f)',
    EROFS: 'read-only file system',
    EXDEV: 'on another file system',
    EIO: 'input/output error',
  };
  return `${path}: ${what[err.code ?? ''] ?? err.message}`;
}

/** `path` inside `root` (both real, absolute)? */
function within(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

function realDir(c: Pick<Confinement, 'cwd'>, path: string, label: string): string {
  let real: string;
  try {
    real = onPath(c, path, (p) => realpathSync.native(p));
  } catch (e) {
    throw new PathError(fsMessage(label, e));
  }
  if (!statSync(real).isDirectory()) throw new PathError(`${label}: not a directory`);
  return real;
}

/**
 * The confinement of a run.
 *
 * @param opts `root`: `--root DIR`; `restrictor`: `--load-restrictor`; `inputs`: input paths as given (`-` is
 *   stdin); `cwd`: the working directory
 * @throws PathError when `--root` names no directory
 */
export function confinementOf(opts: {
  root?: string;
  restrictor: LoadRestrictor;
  inputs: readonly string[];
  cwd: string;
  argocd: boolean;
}): Confinement {
  const cwd = opts.cwd;
  if (opts.restrictor === 'LoadRestrictionsNone') return { none: true, named: [], label: 'none', cwd };
  if (opts.root !== undefined) {
    const root = realDir(opts, resolve(opts.cwd, opts.root), `--root ${opts.root}`);
    return { none: false, named: [root], explicit: root, label: `--root ${opts.root}`, cwd };
  }
  if (!opts.argocd) return { none: false, named: [], namedFree: true, label: 'the directory given', cwd };
  const named = [realDir(opts, opts.cwd, 'the current directory')];
  for (const p of opts.inputs) {
    if (p === '-') continue;
    const abs = resolve(opts.cwd, p);
    let st: Stats;
    try {
      st = statSync(abs);
    } catch {
      continue; // reported when the input is read
    }
    try {
      named.push(realpathSync.native(st.isDirectory() ? abs : dirname(abs)));
    } catch {
      // reported when the input is read
    }
  }
  return { none: false, named, label: "the application's directory", cwd };
}

/**
 * A path named on the command line that is a stream rather than a file in a tree: a FIFO (`<(kustomize build)`)
 * or a character device (`/dev/stdin`, `/dev/null`, `/dev/full`). Read and written as they are, outside the
 * default root; an explicit `--root` admits none of them.
 */
export function isStream(c: Confinement, path: string): boolean {
  if (c.explicit !== undefined && !c.none) return false;
  try {
    const st = statSync(fsPath(c, path));
    return st.isFIFO() || st.isCharacterDevice();
  } catch {
    return false;
  }
}

const WIDEN = 'the root can be widened with --root DIR (or --load-restrictor LoadRestrictionsNone)';

/**
 * Checks that `real` (a real path) lies inside one of `roots`; else throws naming `label` (the path as given).
 * @throws PathError
 */
export function assertInside(c: Confinement, real: string, label: string, roots?: readonly string[]): void {
  if (c.none || (roots === undefined && c.namedFree) || (roots ?? c.named).some((r) => within(real, r))) return;
  throw new PathError(
    `${label}: resolves outside the root (${c.label}); meshinject reads and writes only inside it; ${WIDEN}`,
  );
}

/**
 * The real path of a file to read, checked against the roots: a dangling link, a loop, a directory or a
 * missing file is an error naming `label`.
 * @throws PathError
 */
export function resolveReadable(c: Confinement, path: string, label: string, roots?: readonly string[]): string {
  let real: string;
  try {
    real = onPath(c, path, (p) => realpathSync.native(p));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && lstatSync(fsPath(c, path), { throwIfNoEntry: false })?.isSymbolicLink())
      throw new PathError(`${label}: a dangling symbolic link (its target does not exist)`);
    const raw = code === 'ENOENT' ? rawNameOf(path, c) : undefined;
    if (raw !== undefined)
      throw new PathError(
        `${label.slice(0, label.length - path.length)}${raw}: the name is not valid UTF-8 (bytes shown as \\xNN); rename it`,
      );
    throw new PathError(fsMessage(label, e));
  }
  assertInside(c, real, label, roots);
  return real;
}

/**
 * The real path a file the run writes goes to (a symbolic link is written through to its target), checked
 * before anything is written: inside the root, not a directory, its directory existing and writable (a
 * temporary file is created there and renamed over the target).
 *
 * @param label the option and the path as given, e.g. `--report junit=r.xml`
 * @throws PathError
 */
export function resolveWritable(c: Confinement, path: string, label: string): string {
  if (namesDirectory(path))
    throw new PathError(`${label}: names a directory (a trailing /, . or ..); an output is a file`);
  const st = onPath(c, path, (p) => lstatSync(p, { throwIfNoEntry: false }));
  let target: string;
  if (st === undefined) {
    // The kernel resolves `link/../out.yaml` through the link: the parent is taken as written (not
    // normalised), its real path found, and the name joined to it.
    const parent = dirname(fsPath(c, path));
    let realParent: string;
    try {
      realParent = realpathSync.native(parent);
    } catch (e) {
      throw new PathError(
        `${label}: its directory cannot be used (${fsMessage(dirname(path), e).replace(/^.*?: /, '')})`,
      );
    }
    if (!statSync(realParent).isDirectory()) throw new PathError(`${label}: ${dirname(path)} is not a directory`);
    target = join(realParent, basename(path));
  } else {
    target = resolveReadable(c, path, label);
    if (statSync(target).isDirectory()) throw new PathError(`${label}: is a directory`);
  }
  assertInside(c, target, label);
  try {
    accessSync(dirname(target), constants.W_OK | constants.X_OK);
  } catch (e) {
    throw new PathError(
      `${label}: its directory is not writable (${fsMessage(dirname(path), e).replace(/^.*?: /, '')}); meshinject writes a temporary file beside it and renames it over`,
    );
  }
  return target;
}

/** A path whose last component is a directory whatever it resolves to: `x/`, `.`, `..`, `x/.`, `x/..`. */
function namesDirectory(path: string): boolean {
  return path.endsWith(sep) || path.endsWith('/') || /(^|\/)\.\.?$/.test(path);
}

const MANIFEST = /\.(ya?ml|json)$/i;

/** Files of a directory that are not inputs: a kustomize or kpt package's own files, with what they are. */
const PACKAGE_FILES: Readonly<Record<string, string>> = {
  'kustomization.yaml': 'a kustomize Kustomization',
  'kustomization.yml': 'a kustomize Kustomization',
  Kustomization: 'a kustomize Kustomization',
  Kptfile: 'a kpt Kptfile',
};
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A file name's bytes for a message: printable ASCII as is, every other byte as `\xNN`. */
export function escapeNameBytes(name: Buffer): string {
  let out = '';
  for (const b of name)
    out += b >= 0x20 && b < 0x7f && b !== 0x5c ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`;
  return out;
}

/** Decodes a directory entry's name; a name that is not UTF-8 is an error when the entry would be read. */
function entryName(dir: string, e: Dirent<Buffer>): string | undefined {
  try {
    return UTF8.decode(e.name);
  } catch {
    const looksRead = e.isDirectory() || MANIFEST.test(e.name.toString('latin1'));
    if (e.name[0] === 0x2e || !looksRead) return undefined; // hidden, or not a manifest: never read
    throw new PathError(
      `${join(dir, escapeNameBytes(e.name))}: the name is not valid UTF-8 (bytes shown as \\xNN); rename it`,
    );
  }
}

/** A directory, links followed? False when it cannot be stat'ed (the read that follows says why). */
function isDirectory(c: Confinement, path: string): boolean {
  try {
    return statSync(fsPath(c, path)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * One entry found in a directory, to be read: a regular file, or a symbolic link to a regular file inside the
 * roots. Returns false for what is not read (a link to a directory).
 */
function acceptEntry(c: Confinement, p: string, e: Dirent<Buffer>, roots: readonly string[]): boolean {
  if (e.isFile()) return true;
  if (e.isSymbolicLink()) {
    if (isDirectory(c, p)) return false; // links to directories are not followed
    if (statSync(resolveReadable(c, p, p, roots)).isFile()) return true;
  }
  throw new PathError(`${p}: not a regular file (a FIFO, socket or device named like a manifest)`);
}

/**
 * The manifest files under a directory: `*.yaml`, `*.yml`, `*.json`, recursively, sorted by path (code unit
 * order). Entries whose name starts with `.` (`.git`, `.github`) and symbolic links to directories are not
 * followed. Every file must resolve inside the directory (with `--root`, inside the root). A package's own
 * files (`PACKAGE_FILES`) are not inputs: they go to `leftOut`.
 * @throws PathError naming the entry: unreadable directory, name not UTF-8, dangling link, loop, outside the root
 */
export function manifestFiles(c: Confinement, dir: string, leftOut: Array<{ path: string; why: string }>): string[] {
  const roots = c.explicit !== undefined ? [c.explicit] : [realDir(c, dir, dir)];
  if (c.explicit !== undefined) assertInside(c, realDir(c, dir, dir), dir);
  const out: string[] = [];
  const walk = (d: string): void => {
    let entries: Dirent<Buffer>[];
    try {
      entries = onPath(c, d, (p) => readdirSync(p, { withFileTypes: true, encoding: 'buffer' }));
    } catch (e) {
      throw new PathError(fsMessage(d, e));
    }
    for (const e of entries) {
      const name = entryName(d, e);
      if (name === undefined || name.startsWith('.')) continue;
      const p = join(d, name);
      const packageFile = Object.hasOwn(PACKAGE_FILES, name) ? PACKAGE_FILES[name] : undefined;
      if (packageFile !== undefined && !e.isDirectory()) leftOut.push({ path: p, why: packageFile });
      else if (e.isDirectory()) walk(p);
      else if (MANIFEST.test(name) && acceptEntry(c, p, e, roots)) out.push(p);
    }
  };
  walk(dir);
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * For a path that was not found and holds U+FFFD: the path as its bytes were given (escaped, `\xNN`), when a
 * file by those bytes exists. Node decodes the command line as UTF-8, replacing bytes that are not; the raw
 * arguments are in `/proc/self/cmdline` (Linux). Undefined elsewhere or when no such file exists.
 */
export function rawNameOf(path: string, c: Pick<Confinement, 'cwd'>): string | undefined {
  if (!path.includes('\uFFFD')) return undefined;
  let cmdline: Buffer;
  try {
    cmdline = readFileSync('/proc/self/cmdline');
  } catch {
    return undefined;
  }
  for (let start = 0; start < cmdline.length; ) {
    let end = cmdline.indexOf(0, start);
    if (end < 0) end = cmdline.length;
    let raw = cmdline.subarray(start, end);
    start = end + 1;
    const text = raw.toString('utf8');
    if (text !== path && text.endsWith(`=${path}`))
      raw = raw.subarray(raw.indexOf(0x3d) + 1); // --config=PATH
    else if (text !== path) continue;
    if (
      raw.toString('utf8') === path &&
      lstatSync(isAbsolute(path) ? raw : Buffer.concat([Buffer.from(c.cwd.endsWith(sep) ? c.cwd : c.cwd + sep), raw]), {
        throwIfNoEntry: false,
      })
    )
      return escapeNameBytes(raw);
  }
  return undefined;
}
