/**
 * The heap guard: a run that cannot fit Node's heap stops with advice (`NODE_OPTIONS=--max-old-space-size`)
 * instead of V8 aborting with "JavaScript heap out of memory": refused before processing (`checkHeapFor`), or
 * stopped while processing (`heapGuard`, called after every resource). Nothing has been written then.
 */
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { RunInput } from '../run.ts';
import { containFor } from './contained.ts';
import { CliError, type Session } from './session.ts';

/**
 * Share of the old generation (`--max-old-space-size`) in live use at which a run stops with advice instead of
 * crashing out of memory. Measured: many small workloads (2 000 one-container Deployments, 378 KB) peak at 62 MB
 * of heap with 13 MB of output, and V8 aborted at 4 000 of them under a 64 MB old space while the old check
 * (90% of the whole heap, young generation included, every 64 resources) never fired; what is left above this
 * share is the room for writing the output out.
 */
const HEAP_STOP = 0.85;

/**
 * A full garbage collection, to tell live data from garbage before stopping a run (`--expose-gc` set on first
 * use, not at import: a V8 flag set changes V8's flag hash, and the bin's code cache is accepted only when the
 * hash matches the one it was written with; undefined where V8 refuses it).
 */
let gc: { collect?: () => void } | undefined;

function collectGarbage(): (() => void) | undefined {
  if (gc) return gc.collect;
  try {
    setFlagsFromString('--expose-gc');
    gc = { collect: runInNewContext('gc') as () => void };
  } catch {
    gc = {};
  }
  return gc.collect;
}

/**
 * What the heap guard reads of the heap, in bytes: the old generation's limit, the heap in use now (live data
 * and garbage not yet collected), and a full garbage collection (false where none can run: V8 refuses
 * `--expose-gc`).
 */
export interface HeapProbe {
  oldSpace(): number;
  used(): number;
  collect(): boolean;
}

/**
 * The probe of this isolate's V8 heap (the main thread's, or a contained run's Worker: src/cli/contained.ts).
 * `--expose-gc` is set only at the first collection, never for a run that stays below the mark (see `gc`).
 */
const V8_PROBE: HeapProbe = {
  oldSpace: () => oldSpaceBytes(),
  used: () => getHeapStatistics().used_heap_size,
  collect: () => {
    const collect = collectGarbage();
    collect?.();
    return collect !== undefined;
  },
};

/**
 * A progress hook that stops the run with a clear error, before V8 aborts with "JavaScript heap out of memory",
 * when the live heap nears the old generation's limit (`HEAP_STOP` of it), checked after every resource. Garbage
 * never stops a run: whenever the heap in use is above the mark, a full collection runs first and the run stops
 * only when what is live after it is still above the mark (where no collection can run, the heap in use decides).
 * The message gives the limit, the live heap, how far the run got and a `--max-old-space-size` value that should
 * suffice. Nothing has been written then (output is complete or none).
 *
 * A collection runs at most once per resource, and only above the mark, where V8 itself collects as often.
 * (One collection per run let a second pass above the mark stop a run on garbage alone: a `diff -i` of four
 * 400 KB files, 58 MB live, stopped at "163 MB in use" under a 192 MB heap: test/cli/heap-guard.test.ts.)
 * @param probe the heap read (default: this isolate's V8 heap)
 * @throws CliError
 */
export function heapGuard(probe: HeapProbe = V8_PROBE): (done: number, total: number) => void {
  const oldSpace = probe.oldSpace();
  const stop = HEAP_STOP * oldSpace;
  return (done, total) => {
    let used = probe.used();
    if (used < stop) return;
    if (probe.collect()) {
      used = probe.used();
      if (used < stop) return;
    }
    // Early in a run the rate says little: twice what is in use then, else what the rate needs for all.
    throw heapError(
      oldSpace,
      used,
      `after ${done} of ${total} resources`,
      done < total / 10 ? 2 * used : used * (total / done),
    );
  };
}

/** The error of a run that cannot fit the heap: exit 2, naming `NODE_OPTIONS=--max-old-space-size`. */
function heapError(oldSpace: number, used: number, where: string, need: number): CliError {
  return new CliError(
    `the input needs more memory than Node's heap limit of ${mebibytes(oldSpace)} MB (${mebibytes(used)} MB in use ${where}); run again with NODE_OPTIONS=--max-old-space-size=${adviseHeap(need)} (megabytes), or split the input`,
  );
}

/**
 * Old-generation heap a run needs per input byte, measured: a 4.9 MB ResourceList of 3 000 workloads runs with
 * `--max-old-space-size=80` and aborts with 60; the 162 MB ResourceList of 100 000 workloads runs with the
 * default of about 4 GB (bench/RESULTS.md, "Beyond 10 000").
 */
const OLD_SPACE_PER_INPUT_BYTE = 16;
/**
 * Old-generation heap a run needs per resource, measured on the worst class, many small workloads: 2 000
 * one-container Deployments (378 KB) hold 73 bytes of heap per input byte once parsed (14 KB per resource) and
 * peak near 60 MB while rendering output 34 times the input. An input needs the larger of the two estimates.
 */
const OLD_SPACE_PER_RESOURCE = 20 * 1024;
/** V8's young generation, the part of `heap_size_limit` that `--max-old-space-size` does not set (16 MiB semi-spaces). */
const YOUNG_GENERATION = 48 * 1048576;

const mebibytes = (n: number): number => Math.round(n / 1048576);

/** The old generation's limit in bytes: the heap limit without the young generation. */
const oldSpaceBytes = (): number => getHeapStatistics().heap_size_limit - YOUNG_GENERATION;

/**
 * Refuses, before processing starts, an input that cannot fit Node's heap (V8 would abort with "JavaScript heap
 * out of memory" and a core dump): the message names the flag and a value that should suffice.
 * @throws CliError
 */
export function checkHeapFor(inputs: readonly RunInput[]): void {
  const bytes = inputs.reduce((n, i) => n + i.text.length, 0);
  const resources = inputs.reduce((n, i) => n + countResources(i.text), 0);
  const oldSpace = oldSpaceBytes();
  const need = Math.max(bytes * OLD_SPACE_PER_INPUT_BYTE, resources * OLD_SPACE_PER_RESOURCE);
  if (need <= oldSpace) return;
  throw new CliError(
    `the input (${mebibytes(bytes)} MB) needs about ${mebibytes(need)} MB of heap, more than Node's limit of ${mebibytes(oldSpace)} MB; run again with NODE_OPTIONS=--max-old-space-size=${adviseHeap(need)} (megabytes), or split the input`,
  );
}

/** Thrown by `prepare` (nothing written yet) when the run is to go on in a heap-capped Worker (src/cli/contained.ts). */
export class ContainRun {
  constructor(
    readonly oldSpaceMb: number,
    readonly heapError: string,
  ) {}
}

/**
 * Sends a run whose heap need (inputs and configs, `OLD_SPACE_PER_INPUT_BYTE`) is a large share of the heap
 * (`containFor`) on into a heap-capped Worker, where running out of heap inside one resource is the heap error,
 * not V8's abort (src/cli/contained.ts).
 * @throws ContainRun when `io.contain` is given and the run is that large
 */
export function containIfLarge(s: Session, texts: ReadonlyArray<{ text: string }>): void {
  if (!s.io.contain) return;
  const oldSpace = oldSpaceBytes();
  const need = texts.reduce((n, t) => n + t.text.length, 0) * OLD_SPACE_PER_INPUT_BYTE;
  if (!containFor(need, oldSpace)) return;
  throw new ContainRun(
    mebibytes(oldSpace),
    `the input needs more memory than Node's heap limit of ${mebibytes(oldSpace)} MB (it ran out while building one resource or output); run again with NODE_OPTIONS=--max-old-space-size=${adviseHeap(4 * Math.max(need, oldSpace))} (megabytes), or make the input or its configs smaller`,
  );
}

/** Resources in a text, counted before parsing: each has an `apiVersion` (a linear scan). */
function countResources(text: string): number {
  let n = 0;
  for (let i = text.indexOf('apiVersion'); i >= 0; i = text.indexOf('apiVersion', i + 10)) n++;
  return n;
}

/** A `--max-old-space-size` value (MB) with room above `bytes`: 1.5 times, rounded up to a whole GiB. */
function adviseHeap(bytes: number): number {
  return Math.ceil((mebibytes(bytes) * 1.5) / 1024) * 1024;
}
