/** Types of test/setup/checkout-fingerprint.mjs (the `before`/`after` scripts' record of the checkout's build). */

/** `{ path: "<size> <mtime ms> <sha256>" }` for every watched file that exists, paths relative to the checkout. */
export function fingerprint(): Record<string, string>;

/** The watched files whose fingerprint differs between `before` and `after` (added, removed or changed), sorted. */
export function changedFiles(before: Record<string, string>, after: Record<string, string>): string[];
