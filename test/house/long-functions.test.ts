/**
 * Issue #14: no hand-written function in src/ over 60 lines, except parsers, tables and ported recipes whose
 * doc comment says so (`Long by design: ...`). scripts/long-functions.ts lists them; this keeps the rule.
 */
import t from 'tap';
import { fileURLToPath } from 'node:url';
import { longFunctions, sourceFiles } from '../../scripts/long-functions.ts';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

t.test('every function over 60 lines in src/ says why in its doc comment', async (t) => {
  const found = longFunctions(sourceFiles(SRC));
  t.ok(found.length > 0, 'the lister finds the long-by-design functions (it reads the sources)');
  t.same(
    found.filter((f) => !f.exempt).map((f) => `${f.file}:${f.line} ${f.name} (${f.lines} lines)`),
    [],
  );
});
