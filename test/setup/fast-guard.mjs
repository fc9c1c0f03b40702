// Preloaded by `npm run test:fast` (scripts/test-fast.mjs): the quick loop runs only test files that spawn no
// process and read no corpus. A test that spawns one anyway fails here, naming the call, instead of slowing the
// loop down; it belongs to `npm test` only (a test file is picked by scripts/test-fast.mjs's scan).
import { createRequire, syncBuiltinESMExports } from 'node:module';

const require = createRequire(import.meta.url);
const cp = require('node:child_process');
for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']) {
  cp[name] = () => {
    throw new Error(
      `npm run test:fast: child_process.${name} was called; a test that spawns a process belongs to npm test only (scripts/test-fast.mjs)`,
    );
  };
}
syncBuiltinESMExports();
