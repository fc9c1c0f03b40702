// The README's "Command line" section: every console example is run as written (with `meshinject` on
// PATH being this checkout's bin), on a copy of the bundled shop example, and its output (stdout and
// stderr together, in order) is compared line for line; `# exits N` after a command is its exit status.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, ROOT, makeTempDir } from '../helpers/e2e.ts';

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const SHOP = join(ROOT, 'examples/shop');

/** The console examples of the README's "Command line" section: each command with its expected output. */
function examples(): Array<{ command: string; status: number; output: string[] }> {
  const start = README.indexOf('\n## Command line\n');
  const end = README.indexOf('\n## ', start + 5);
  const section = README.slice(start, end);
  const out: Array<{ command: string; status: number; output: string[] }> = [];
  for (const block of section.matchAll(/```console\n([\s\S]*?)```/g)) {
    for (const line of block[1]!.split('\n')) {
      if (line.startsWith('$ ')) {
        const m = /^(.*?)(?:\s+# exits (\d+))?$/.exec(line.slice(2))!;
        out.push({ command: m[1]!, status: Number(m[2] ?? 0), output: [] });
      } else if (line !== '' || out.at(-1)!.output.length > 0) out.at(-1)!.output.push(line);
    }
  }
  for (const e of out) while (e.output.at(-1) === '') e.output.pop();
  return out;
}

t.test('README console examples run as documented on the shop example', { skip: existsSync(SHOP) ? false : 'examples/shop (the bundled example, from the packaging work) is not in this checkout' }, async (t) => {
  const list = examples();
  t.ok(list.length >= 7, `the section has its examples (${list.length})`);
  const tmp = makeTempDir('readme');
  t.teardown(tmp.cleanup);
  cpSync(SHOP, join(tmp.dir, 'examples/shop'), { recursive: true });
  mkdirSync(join(tmp.dir, 'bin'));
  writeFileSync(join(tmp.dir, 'bin/meshinject'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`);
  chmodSync(join(tmp.dir, 'bin/meshinject'), 0o755);
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${join(tmp.dir, 'bin')}:${process.env.PATH}` };
  delete env.LOG_TO_STDERR;
  delete env.ARGOCD_APP_NAME;
  delete env.ARGOCD_APP_NAMESPACE;
  for (const e of list) {
    const r = spawnSync('sh', ['-c', `exec 2>&1; ${e.command}`], { cwd: tmp.dir, env, encoding: 'utf8' });
    t.equal(r.status, e.status, `${e.command}: exit ${e.status}`);
    t.same(r.stdout.replace(/\n$/, '').split('\n').filter((l, i, a) => a.length > 1 || l !== ''), e.output, e.command);
  }
  const sarif = JSON.parse(readFileSync(join(tmp.dir, 'meshinject.sarif'), 'utf8'));
  t.equal(sarif.version, '2.1.0', 'the SARIF report of the example was written');
});
