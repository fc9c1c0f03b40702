/**
 * When V8 tiers hot functions up to its optimising compiler (TurboFan). A run of a few workloads executes most
 * of its code once or a few times: TurboFan's compiles (on a background thread: 60 million instructions in a
 * 10-workload run at the earlier budget of 200 000, beside the main thread's 410 million over bare Node) cost
 * more CPU than the optimised code then saves. A long run spends most of its time in a few hot functions, which should be
 * optimised early.
 *
 * V8 counts down an "interrupt budget" (bytecode size executed, roughly) per function before it considers
 * optimising it; `--interrupt-budget` sets it (V8's default 67 584). bin/meshinject.js starts every run with
 * `START_INTERRUPT_BUDGET`, set before the bundle is compiled (V8 accepts a code cache only under the flags it
 * was made with). The schedule (`tierUpSchedule`) lowers it to `TIER_UP_INTERRUPT_BUDGET` from the start for
 * an input of `LARGE_INPUT_CHARS` or more, else once the command has taken `TIER_UP_AFTER_MS`. A budget changed
 * mid-run applies from each function's next budget reset on.
 *
 * Measured (CPU seconds, medians of alternating runs on one 2-core machine, Istio, the bench's inputs), with
 * 200 000 against 2 000 000 from the start:
 * - 10-workload ResourceList: 0.202 against 0.188 (callgrind: 973 against 909 million instructions);
 * - 100 / 300 / 1 000 workloads: 0.62 / 1.14 / 2.50 against 0.43 / 0.92 / 2.16;
 * - 3 000 workloads (6.7 MB): 3.97 against 3.83; every-shape-different 3 000: 5.15 against 4.65;
 * - all-workloads 5 000 (8 MB): 6.64 against 6.50; all-workloads 10 000 (16 MB): 10.2 against 11.2;
 * - 75 000 anchored documents (6.8 MB, read by the `yaml` package): 17.0 against 20.3, hence the time rule.
 */

/** The budget bin/meshinject.js sets at start (test/cli/bin-code-cache.test.ts checks that the two agree). */
export const START_INTERRUPT_BUDGET = 2_000_000;
/** The budget once a run tiers up: about 3× V8's default, which measured best at 10 000 workloads. */
export const TIER_UP_INTERRUPT_BUDGET = 200_000;
/** Input size (characters, all inputs together) from which a run tiers up from the start. */
export const LARGE_INPUT_CHARS = 8 * 1048576;
/** Time (milliseconds from the command's start) after which a run tiers up. */
export const TIER_UP_AFTER_MS = 1000;

/**
 * The tier-up schedule of one run. Create it once the inputs are read, before they are processed; call the
 * returned function as the run goes (after each resource; it looks at the clock every 16th call). Sets the
 * flag at most once.
 *
 * @param inputChars the size of all inputs together, in characters
 * @param start when the command started, on the clock `now`
 * @param now a monotonic clock in milliseconds
 * @param setFlags V8's `setFlagsFromString` (a parameter for tests)
 * @returns the progress hook
 */
export function tierUpSchedule(
  inputChars: number,
  start: number,
  now: () => number,
  setFlags: (flags: string) => void,
): () => void {
  let pending = true;
  const tierUp = (): void => {
    pending = false;
    setFlags(`--interrupt-budget=${TIER_UP_INTERRUPT_BUDGET}`);
  };
  if (inputChars >= LARGE_INPUT_CHARS) tierUp();
  let calls = 0;
  // The clock is read every 16th call: a short run never reads it.
  return () => {
    if (pending && (++calls & 15) === 0 && now() - start >= TIER_UP_AFTER_MS) tierUp();
  };
}
