/** A shortcut of `needsQuotes` (../yaml/scalars.ts) for the sidecar plans (`./plan-values.ts`). */

/**
 * Whether a string that starts with character code `c` reads as a string in every YAML reader whatever follows
 * (`needsQuotes` false): an ASCII letter that starts no null, boolean (`y`, `yes`, `n`, `no`, `true`, `false`,
 * `on`, `off`, `null`), or digit-less exponent (`e5`, `E12`: YAML 1.1) form; numbers and timestamps start with
 * a digit, a sign or `.` (../yaml/scalars.ts). Spares `isSlotSafe` and a plan's fill the patterns for most names.
 */
export function plainByFirstLetter(c: number): boolean {
  const lower = c | 0x20;
  return (
    lower >= 0x61 &&
    lower <= 0x7a &&
    lower !== 0x79 &&
    lower !== 0x6e &&
    lower !== 0x74 &&
    lower !== 0x66 &&
    lower !== 0x6f &&
    lower !== 0x65
  );
}
