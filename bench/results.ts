/**
 * The hand-kept part of bench/RESULTS.md: everything from the heading `## Notes (by hand` to the end of the file
 * is written by people after a run, and `npm run bench` keeps it when it rewrites the generated part above it.
 */

/** The heading that starts the hand-kept section (matched at the start of a line, any heading text after it). */
export const NOTES_HEADING = '## Notes (by hand';

/** The section a report gets when the previous one had none. */
const EMPTY_NOTES = `${NOTES_HEADING}: what limits any target not met; kept when the bench rewrites this file)\n\n`;

/**
 * The hand-kept notes of a previous report: from the line starting with `## Notes (by hand` to the end, or an
 * empty section with that heading when `previous` is undefined or has none.
 */
export function notesSection(previous: string | undefined): string {
  if (previous === undefined) return EMPTY_NOTES;
  const at = previous.search(/^## Notes \(by hand/m);
  return at < 0 ? EMPTY_NOTES : previous.slice(at);
}
