import { fstatSync, realpathSync, statSync, type Stats } from 'node:fs';
import { basename, dirname } from 'node:path';

/**
 * Which file a path names, as the kernel resolves it (issue #36 §4): two outputs of one run must never be one
 * file, and no output may be a file the run reads (an input, a `--config` layer, a driver's file flag), which
 * the rename would replace. A file is the same when it is reached by the same real path (symbolic links
 * followed, `..` after a link taken from the link's target) or has the same device and inode (a hard link, a
 * name differing only in case on a case-insensitive file system, a FIFO or device reached by another name).
 * Two files not there yet are the same when their directories are one and their names differ only in case
 * (Unicode NFC, lower-cased): on a case-insensitive file system (macOS, Windows shares) they would be.
 */

/** One file a run reads or writes, for `sameFile`. */
export interface FileIdentity {
  /** How messages name it: the option and the path as given (`--report junit=out.yaml`, `the input a.yaml`). */
  label: string;
  /** The real path, when known (an output's target, `resolveWritable`). */
  real?: string;
  /** `dev:ino` of the file, when it exists. */
  inode?: string;
  /** For a file not there yet: `dev:ino` of its directory and its name case-folded. */
  newName?: { dir: string; folded: string };
}

const inodeOf = (st: Stats): string => `${st.dev}:${st.ino}`;

/**
 * The identity of a file the run will write, from its real target path (`resolveWritable`, or the path of a
 * stream as given): its inode if it exists, else its directory's inode and its case-folded name.
 */
export function outputIdentity(target: string, label: string): FileIdentity {
  const st = statSync(target, { throwIfNoEntry: false });
  if (st) return { label, real: target, inode: inodeOf(st) };
  const dir = statSync(dirname(target), { throwIfNoEntry: false });
  return {
    label,
    real: target,
    ...(dir ? { newName: { dir: inodeOf(dir), folded: basename(target).normalize('NFC').toLowerCase() } } : {}),
  };
}

/** The identity of a file the run reads, from its open descriptor (stdin included: a regular file redirected). */
export function readIdentity(fd: number, label: string, path?: string): FileIdentity {
  const st = fstatSync(fd);
  let real: string | undefined;
  if (path !== undefined) {
    try {
      real = realpathSync.native(path);
    } catch {
      // the descriptor's inode identifies it
    }
  }
  return { label, inode: inodeOf(st), ...(real !== undefined ? { real } : {}) };
}

/** Whether two identities are one file (see the module comment). */
export function sameFile(a: FileIdentity, b: FileIdentity): boolean {
  if (a.real !== undefined && a.real === b.real) return true;
  if (a.inode !== undefined && a.inode === b.inode) return true;
  return (
    a.newName !== undefined &&
    b.newName !== undefined &&
    a.newName.dir === b.newName.dir &&
    a.newName.folded === b.newName.folded
  );
}

/**
 * The message refusing two outputs that are one file, or an output that is a file the run reads; undefined
 * when every output has a file of its own and none is read.
 *
 * @param outputs the files the run will write, in command-line order
 * @param reads the files the run read (inputs, configs, file flags); omit to check the outputs alone
 */
export function aliasProblem(
  outputs: readonly FileIdentity[],
  reads: readonly FileIdentity[] = [],
): string | undefined {
  for (const [i, output] of outputs.entries()) {
    const earlier = outputs.slice(0, i).find((o) => sameFile(o, output));
    if (earlier)
      return `${earlier.label} and ${output.label} are the same file; each output needs a file of its own (nothing was written)`;
    const read = reads.find((r) => sameFile(r, output));
    if (read)
      return `${output.label} is ${read.label} (the same file), which writing it would replace; write the output elsewhere (nothing was written)`;
  }
  return undefined;
}
