// The console examples of the README and of docs/reference/cli.md: every one is run as written (with
// `meshinject` on PATH being this checkout's bin), on a copy of the bundled shop example, and its output
// (stdout and stderr together, in order) is compared line for line; `# exits N` after a command is its exit
// status. And every shell block of the README and docs/ is one of those, or is marked
// `<!-- not runnable here: REASON -->` on the line before it or `# not runnable here: REASON` as its first line (issue #39).
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, ROOT, makeTempDir } from '../helpers/e2e.ts';

const SHOP = join(ROOT, 'examples/shop');
/** The pages whose console examples this test runs. */
const RUN = ['README.md', 'docs/reference/cli.md'];

/** The console examples of a page: each command with its expected output. */
function examples(page: string): Array<{ command: string; status: number; output: string[] }> {
  const text = readFileSync(join(ROOT, page), 'utf8');
  const out: Array<{ command: string; status: number; output: string[] }> = [];
  for (const block of text.matchAll(/```console\n([\s\S]*?)```/g)) {
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

/** Every Markdown page of docs/, recursively, and the README (paths from the repository root). */
function pages(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(`${dir}/${e.name}`) : e.name.endsWith('.md') ? [`${dir}/${e.name}`] : [],
    );
  return ['README.md', ...(existsSync(join(ROOT, 'docs')) ? walk('docs') : [])];
}

t.test('every shell block in the README and docs/ is run here or marked not runnable with a reason', async (t) => {
  const all = pages();
  t.ok(all.length >= 10, `pages: ${all.length}`);
  for (const page of all) {
    const lines = readFileSync(join(ROOT, page), 'utf8').split('\n');
    lines.forEach((line, i) => {
      const m = /^```(sh|bash|shell|console|zsh)\s*$/.exec(line);
      if (!m) return;
      // Marked on the line before (`<!-- not runnable here: REASON -->`) or as the block's first line (`# not runnable here: REASON`).
      const marked =
        /^<!-- not runnable here: \S.* -->$/.test(lines[i - 1] ?? '') ||
        /^# not runnable here: \S/.test(lines[i + 1] ?? '');
      const run = m[1] === 'console' && RUN.includes(page);
      t.ok(
        marked || run,
        `${page}:${i + 1}: a ${m[1]} block ${marked ? 'marked' : run ? 'run by this test' : 'neither run nor marked'}`,
      );
    });
  }
});

for (const page of RUN)
  t.test(`${page}: console examples run as documented on the shop example`, async (t) => {
    const list = examples(page);
    t.ok(list.length >= 4, `the page has its examples (${list.length})`);
    const tmp = makeTempDir('readme');
    t.teardown(tmp.cleanup);
    cpSync(SHOP, join(tmp.dir, 'examples/shop'), { recursive: true });
    mkdirSync(join(tmp.dir, 'bin'));
    writeFileSync(
      join(tmp.dir, 'bin/meshinject'),
      `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`,
    );
    chmodSync(join(tmp.dir, 'bin/meshinject'), 0o755);
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${join(tmp.dir, 'bin')}:${process.env.PATH}` };
    delete env.LOG_TO_STDERR;
    delete env.ARGOCD_APP_NAME;
    delete env.ARGOCD_APP_NAMESPACE;
    for (const e of list) {
      const r = spawnSync('sh', ['-c', `exec 2>&1; ${e.command}`], { cwd: tmp.dir, env, encoding: 'utf8' });
      t.equal(r.status, e.status, `${e.command}: exit ${e.status}`);
      t.same(
        r.stdout
          .replace(/\n$/, '')
          .split('\n')
          .filter((l, _i, a) => a.length > 1 || l !== ''),
        e.output,
        e.command,
      );
    }
    if (page !== 'docs/reference/cli.md') return;
    const sarif = JSON.parse(readFileSync(join(tmp.dir, 'meshinject.sarif'), 'utf8'));
    t.equal(sarif.version, '2.1.0', 'the SARIF report of the example was written');
  });
