import {
  closeSync,
  fchmodSync,
  fchownSync,
  fsyncSync,
  openSync,
  readdirSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { constants } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fsMessage, PathError } from './paths.ts';

/**
 * Crash-safe writes of the files a run produces (`diff -i`, `--output-file`, `--report FORMAT=PATH`; issue #20).
 * A file is never truncated in place: its new content goes to a temporary file in the same directory
 * (`.NAME.meshinject-PID-N.tmp`), which is flushed, fsynced and given the old file's mode and owner, then
 * renamed over the target (rename(2) replaces a name atomically: a reader, a crash or a signal sees the old
 * file or the new one, never a mix). Several files are one batch: every temporary is written first and the
 * renames happen only when all succeeded; a failure removes the temporaries, leaves every file as it was, and
 * names the file that failed.
 *
 * Streams (a FIFO, `/dev/stdout`, `/dev/full`) cannot be renamed over: they are written directly, at commit.
 *
 * Signals: while the temporaries are written (`write`), SIGINT, SIGTERM and SIGHUP are caught between two
 * files: the temporaries are removed and the signal is raised again, so the process ends as it would have,
 * with every file as it was. Once the renames start they run to the end (each is atomic) before a signal
 * caught meanwhile ends the process. Before `write` (reading, injecting) signals keep their default action:
 * nothing has been written then. SIGKILL cannot be caught: it may leave temporaries, never a cut file; the next
 * run that writes the same file removes them (when their process is gone).
 */

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Where a batch hears of signals while it writes: `on` when its write phase starts, `off` when it ends. The
 * process's own signals by default; in the Worker of a contained run (src/cli/contained.ts), where Node
 * delivers no signal, those the main thread forwards.
 */
export interface SignalSource {
  on(handler: (sig: NodeJS.Signals) => void): void;
  off(handler: (sig: NodeJS.Signals) => void): void;
}

const PROCESS_SIGNALS: SignalSource = {
  on: (h) => {
    for (const sig of SIGNALS) process.on(sig, h);
  },
  off: (h) => {
    for (const sig of SIGNALS) process.removeListener(sig, h);
  },
};

// The CLI edge's one setting: the process's signals, or a contained run's forwarded ones (`useSignals`).
let signals: SignalSource = PROCESS_SIGNALS;

/** Makes every batch of this thread hear signals from `source` (the Worker of a contained run). */
export function useSignals(source: SignalSource): void {
  signals = source;
}

/** One file of a batch: its real target path, the option and path for messages, and the content. */
interface Staged {
  target: string;
  label: string;
  /** The temporary holding the new content; absent for a stream, written at commit; undefined once renamed. */
  temp?: string | undefined;
  parts?: readonly string[];
}

let counter = 0;

/** Writes every byte of `text` to `fd` (writeSync may write less than asked). */
function writeAll(fd: number, text: string): void {
  const buf = Buffer.from(text, 'utf8');
  for (let off = 0; off < buf.length; ) off += writeSync(fd, buf, off, buf.length - off);
}

/** A new temporary file beside `target`, created exclusively (never an existing file or link). */
function createTemp(target: string, mode: number): { fd: number; temp: string } {
  for (;;) {
    const temp = join(dirname(target), `.${basename(target)}.meshinject-${process.pid}-${++counter}.tmp`);
    try {
      return { fd: openSync(temp, 'wx', mode), temp };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
}

/** A set of files written all or nothing (see the module comment). */
export class WriteBatch {
  private readonly staged: Staged[] = [];
  private readonly pending: Array<{ target: string; parts: readonly string[]; label: string; stream: boolean }> = [];
  private caught: NodeJS.Signals | undefined;
  private readonly onSignal = (sig: NodeJS.Signals): void => {
    this.caught ??= sig;
  };

  /** Adds a file to the batch; nothing is written before `write`. */
  add(target: string, parts: readonly string[], label: string, stream = false): void {
    this.pending.push({ target, parts, label, stream });
  }

  /**
   * Writes every added file to its temporary (see `stage`), yielding between files so that a signal can be
   * handled (see the module comment). Call `commit` next (or `abort`).
   * @throws PathError naming the file that failed (every temporary removed)
   */
  async write(): Promise<void> {
    if (this.pending.length === 0) return;
    removeStaleTemporaries(this.pending.filter((p) => !p.stream).map((p) => p.target));
    signals.on(this.onSignal);
    try {
      for (const p of this.pending.splice(0)) {
        this.stage(p.target, p.parts, p.label, p.stream);
        await new Promise((resolve) => setImmediate(resolve));
        if (this.caught !== undefined) {
          this.abort();
          this.release();
        }
      }
    } catch (e) {
      this.release();
      throw e;
    }
  }

  /**
   * Stops catching signals; one caught meanwhile ends the process now, as its default action would have
   * (exit status 128 + the signal's number, what a shell shows for a process the signal killed).
   */
  private release(): void {
    signals.off(this.onSignal);
    if (this.caught !== undefined) process.exit(128 + (constants.signals[this.caught] ?? 15));
  }

  /**
   * Writes the new content of `target` to a temporary beside it, fsynced, with the mode and owner of the file
   * it replaces (a new file gets 0666 less the umask).
   *
   * @param target the real path (symbolic links already resolved, `resolveWritable`)
   * @param parts the content, in pieces
   * @param label how to name the file in a message: the option and the path as given
   * @throws PathError naming `label` (the batch's temporaries are removed first)
   */
  stage(target: string, parts: readonly string[], label: string, stream = false): void {
    if (stream) {
      this.staged.push({ target, label, parts });
      return;
    }
    const old = statSync(target, { throwIfNoEntry: false });
    let fd: number | undefined;
    try {
      const t = createTemp(target, old ? old.mode & 0o7777 : 0o666);
      fd = t.fd;
      this.staged.push({ target, label, temp: t.temp });
      for (const p of parts) writeAll(fd, p);
      if (old) {
        fchmodSync(fd, old.mode & 0o7777);
        const mine = statSync(t.temp);
        if (mine.uid !== old.uid || mine.gid !== old.gid) fchownSync(fd, old.uid, old.gid);
      }
      fsyncSync(fd);
    } catch (e) {
      this.abort();
      throw new PathError(`cannot write ${fsMessage(label, e)}; no file was changed`);
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  /** Removes every temporary; the targets stay as they were. */
  abort(): void {
    for (const s of this.staged) {
      if (s.temp === undefined) continue;
      try {
        unlinkSync(s.temp);
      } catch {
        // already gone
      }
    }
    this.staged.length = 0;
  }

  /**
   * Writes the streams, then renames every temporary over its target and fsyncs the directories; then yields
   * once, so that a signal that came while this ran synchronously reaches the handler (Node runs it only when
   * the event loop turns: without the yield it would be lost once the handler is removed, and the run would
   * exit 0), and ends the process with 128 + its number after the renames are done.
   * @throws PathError naming the file that failed
   */
  async commit(): Promise<void> {
    // Streams first: one that fails still leaves every file as it was.
    for (const s of this.staged) {
      if (s.parts === undefined) continue;
      try {
        writeStream(s, s.parts);
      } catch (e) {
        this.abort();
        this.release();
        throw e;
      }
    }
    const dirs = new Set<string>();
    for (const s of this.staged) {
      if (s.temp === undefined) continue;
      try {
        renameSync(s.temp, s.target);
      } catch (e) {
        this.abort();
        this.release();
        throw new PathError(`cannot write ${fsMessage(s.label, e)}`);
      }
      s.temp = undefined;
      dirs.add(dirname(s.target));
    }
    for (const d of dirs) syncDir(d);
    this.staged.length = 0;
    await new Promise((resolve) => setImmediate(resolve));
    this.release();
  }
}

/** A temporary's name: `.NAME.meshinject-PID-N.tmp`. */
const TEMPORARY = /^\.(.+)\.meshinject-(\d+)-\d+\.tmp$/;

/** Is process `pid` alive (or not ours to signal)? */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/**
 * Removes the temporaries a killed run (SIGKILL, a power loss) left beside the files about to be written: only
 * those of these very files, and only when the process that made them no longer exists.
 */
function removeStaleTemporaries(targets: readonly string[]): void {
  const byDir = new Map<string, Set<string>>();
  for (const t of targets) {
    const set = byDir.get(dirname(t)) ?? new Set<string>();
    set.add(basename(t));
    byDir.set(dirname(t), set);
  }
  for (const [dir, names] of byDir) {
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      continue;
    }
    for (const e of entries) {
      const m = TEMPORARY.exec(e);
      if (!m) continue;
      const [, name = '', pid] = m;
      if (!names.has(name) || alive(Number(pid))) continue;
      try {
        unlinkSync(join(dir, e));
      } catch {
        // gone, or not ours to remove: left as it is
      }
    }
  }
}

/** fsyncs a directory, so a rename survives a power loss; best effort (not every file system allows it). */
function syncDir(dir: string): void {
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // a directory that cannot be opened or synced: the rename itself has happened
  }
}

function writeStream(s: Staged, parts: readonly string[]): void {
  let fd: number | undefined;
  try {
    fd = openSync(s.target, 'w');
    for (const p of parts) writeAll(fd, p);
  } catch (e) {
    throw new PathError(`cannot write ${fsMessage(s.label, e)}`);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
