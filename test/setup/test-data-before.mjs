// tap's `before` script: clears this run's test-data records (see test/helpers/data.ts). tap runs this script,
// every test file and the `after` script (test/setup/test-data-notice.mjs) from its own process, so the
// parent's pid names the run.
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

rmSync(join(tmpdir(), `meshinject-test-data-${process.ppid}`), { recursive: true, force: true });
