/**
 * Golden cases: every `test/testdata/<case>/` holds `input.yaml` (what a runner sends), optional
 * `config.yaml` (passed like `--config`), and either `expected.yaml` (the whole stdout, compared byte for
 * byte) or `errors.txt` (one regular expression per line that stderr must match; the exit code must not
 * be 0). Every expected output is also fed back in: a second run must change nothing.
 * `UPDATE_GOLDEN=1 npx tap test/golden.test.ts` rewrites expected.yaml files; review the diff.
 */
import t from 'tap';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { run } from '../src/run.ts';

const DATA = new URL('./testdata/', import.meta.url);
const update = process.env.UPDATE_GOLDEN === '1';

for (const name of readdirSync(DATA).sort()) {
  const dir = new URL(`${name}/`, DATA);
  const file = (f: string) => new URL(f, dir);
  t.test(name, async (t) => {
    t.ok(existsSync(file('input.yaml')), 'case has input.yaml');
    const input = readFileSync(file('input.yaml'), 'utf8');
    const config = existsSync(file('config.yaml')) ? readFileSync(file('config.yaml'), 'utf8') : undefined;
    const opts = { ...(config !== undefined ? { functionConfig: config } : {}), inputName: 'input.yaml' };
    const out = run(input, opts);
    if (existsSync(file('errors.txt'))) {
      t.not(out.exitCode, 0, 'fails');
      t.equal(out.stdout === '' || /kind: ResourceList/.test(out.stdout), true, 'no partial output');
      for (const line of readFileSync(file('errors.txt'), 'utf8').split('\n').filter(Boolean)) {
        t.match(out.stderr, new RegExp(line), `stderr matches ${line}`);
      }
      return;
    }
    if (update) writeFileSync(file('expected.yaml'), out.stdout);
    t.equal(out.exitCode, 0, `exit 0 (stderr: ${out.stderr})`);
    t.equal(out.stdout, readFileSync(file('expected.yaml'), 'utf8'), 'output equals expected.yaml byte for byte');
    const again = run(out.stdout, opts);
    t.equal(again.stdout, out.stdout, 'a second run changes nothing');
  });
}
