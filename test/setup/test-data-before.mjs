// tap's `before` script: clears this run's test-data records (see test/helpers/data.ts). tap runs this script,
// every test file and the `after` script (test/setup/test-data-notice.mjs) from its own process, so the
// parent's pid names the run. Also records the checkout's build files (test/setup/checkout-fingerprint.mjs), which
// the `after` script checks no test changed.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fingerprint } from './checkout-fingerprint.mjs';

const dir = join(tmpdir(), `meshinject-test-data-${process.ppid}`);
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, 'checkout.json'), JSON.stringify(fingerprint()));
