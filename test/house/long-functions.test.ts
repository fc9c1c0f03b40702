/**
 * Issue #14, #35: no hand-written function in src/ over 80 lines (`MAX_FUNCTION_LINES`), except parsers, tables and ported recipes whose
 * doc comment says so (`Long by design: ...`). scripts/long-functions.ts lists them; this keeps the rule.
 */
import t from 'tap';
import { fileURLToPath } from 'node:url';
import { longFunctions, MAX_FUNCTION_LINES, sourceFiles } from '../../scripts/long-functions.ts';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

t.test(`every function over ${MAX_FUNCTION_LINES} lines in src/ says why in its doc comment`, async (t) => {
  t.equal(MAX_FUNCTION_LINES, 80, "the limit is the issue's");
  const found = longFunctions(sourceFiles(SRC));
  t.ok(found.length > 0, 'the lister finds the long-by-design functions (it reads the sources)');
  t.same(
    found.filter((f) => !f.exempt).map((f) => `${f.file}:${f.line} ${f.name} (${f.lines} lines)`),
    [],
  );
});
