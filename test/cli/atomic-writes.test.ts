// Crash-safe writes (issue #20 item 1), tried as an unlucky user would: `diff -i` over many files killed by
// SIGTERM and SIGKILL at random points, a file-size limit (RLIMIT_FSIZE) hit half-way through a batch, a full
// disk (a small tmpfs where this machine may mount one; /dev/full for --output-file), and the mode, owner and
// symbolic links of the files rewritten. Afterwards every file is byte-equal to its old or its new content,
// a failure changes no file at all and names the one that failed, and no temporary is left behind (SIGKILL,
// which cannot be caught, may leave its temporaries).
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { BIN, makeTempDir, runCli } from '../helpers/e2e.ts';
import { deployment as fixtureDeployment } from '../helpers/fixtures.ts';

const deployment = (name: string) => fixtureDeployment(name, { container: 'app' });
/** A ConfigMap of `kib` KiB: makes a file large without making its injection slower. */
const blob = (name: string, kib: number) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}, namespace: shop}\ndata:\n${Array.from({ length: kib }, (_, i) => `  k${i}: "${'x'.repeat(1000)}"`).join('\n')}\n`;

const TEMP = /\.meshinject-\d+-\d+\.tmp$/;
/** Every entry of a directory that is a meshinject temporary. */
const temporaries = (dir: string) => readdirSync(dir).filter((n) => TEMP.test(n));
const hasPrlimit = spawnSync('prlimit', ['--version']).status === 0;

/** Writes `files` (name -> text) into `dir` (created). */
function writeAll(dir: string, files: Record<string, string>): void {
  for (const [n, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, n)), { recursive: true });
    writeFileSync(join(dir, n), text);
  }
}

/** Why a small tmpfs cannot be mounted here (no privilege, no mount), or undefined when it can. */
function tmpfsUnavailable(): string | undefined {
  const tmp = makeTempDir('atomic-probe');
  try {
    const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', tmp.dir], { encoding: 'utf8' });
    if (r.status !== 0)
      return `a small tmpfs cannot be mounted here (${(r.stderr || String(r.error)).trim()}); /dev/full covers --output-file`;
    spawnSync('umount', [tmp.dir]);
    return undefined;
  } finally {
    tmp.cleanup();
  }
}
const readAll = (dir: string, names: string[]) =>
  Object.fromEntries(names.map((n) => [n, readFileSync(join(dir, n), 'utf8')]));

t.test(
  'a file-size limit half-way through diff -i: every file as it was, the failing one named, no temporary left',
  { skip: !hasPrlimit && 'prlimit is not installed' },
  async (t) => {
    const tmp = makeTempDir('atomic-fsize');
    t.teardown(tmp.cleanup);
    const dir = join(tmp.dir, 'm');
    // a-*.yaml are written (to temporaries) before b-big.yaml, whose new content passes the limit.
    const files: Record<string, string> = {
      'a-web.yaml': deployment('web'),
      'a-api.yaml': deployment('api'),
      'b-big.yaml': `${blob('big', 64)}---\n${deployment('big')}`,
      'c-last.yaml': deployment('last'),
    };
    writeAll(dir, files);
    const limit = statSync(join(dir, 'b-big.yaml')).size + 512; // the injection adds several KiB
    const r = spawnSync('prlimit', [`--fsize=${limit}`, process.execPath, BIN, 'diff', '-i', dir], {
      encoding: 'utf8',
    });
    t.equal(r.status, 2, r.stderr);
    t.equal(r.stdout, '');
    t.match(
      r.stderr,
      /cannot write .*b-big\.yaml \(--in-place\): file too large .*no file was changed/,
      'names the file that failed',
    );
    t.same(readAll(dir, Object.keys(files)), files, 'every file byte-equal to its old content');
    t.same(temporaries(dir), [], 'no temporary left');
    // The same run without the limit changes them all.
    const ok = runCli(['diff', '-i', dir]);
    t.equal(ok.status, 0, ok.stderr);
    for (const n of Object.keys(files))
      t.not(readFileSync(join(dir, n), 'utf8'), files[n], `${n} rewritten without the limit`);

    // --output-file: the previous render survives a failed write, nothing on stdout.
    const out = join(tmp.dir, 'out.yaml');
    writeFileSync(out, 'previous render\n');
    const o = spawnSync(
      'prlimit',
      [`--fsize=${limit}`, process.execPath, BIN, '--output-file', out, join(dir, 'b-big.yaml')],
      { encoding: 'utf8' },
    );
    t.equal(o.status, 2, o.stderr);
    t.equal(o.stdout, '');
    t.match(o.stderr, /cannot write --output-file .*out\.yaml: file too large/);
    t.equal(readFileSync(out, 'utf8'), 'previous render\n', 'the previous render is kept');
    t.same(temporaries(tmp.dir), []);
  },
);

t.test('a full disk: /dev/full for --output-file', async (t) => {
  const tmp = makeTempDir('atomic-full');
  t.teardown(tmp.cleanup);
  writeFileSync(join(tmp.dir, 'web.yaml'), deployment('web'));
  writeFileSync(join(tmp.dir, 'junit.xml'), 'previous report\n');
  const full = runCli(['--output-file', '/dev/full', '--report', 'junit=junit.xml', 'web.yaml'], { cwd: tmp.dir });
  t.equal(full.status, 2, full.stderr);
  t.equal(full.stdout, '');
  t.match(full.stderr, /cannot write --output-file \/dev\/full: no space left on device/);
  t.equal(
    readFileSync(join(tmp.dir, 'junit.xml'), 'utf8'),
    'previous report\n',
    'the report of the failed run is not written',
  );
  t.same(temporaries(tmp.dir), []);
});

t.test(
  'a full disk: a small tmpfs for diff -i, --output-file and reports',
  { skip: tmpfsUnavailable() ?? false },
  async (t) => {
    const tmp = makeTempDir('atomic-tmpfs');
    t.teardown(tmp.cleanup);
    const mnt = join(tmp.dir, 'small');
    mkdirSync(mnt);
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', mnt], { encoding: 'utf8' });
    t.equal(mounted.status, 0, mounted.stderr);
    t.teardown(() => spawnSync('umount', [mnt]));
    // 180 KiB of manifests in a 256 KiB file system: the rewritten big file cannot fit beside the old one.
    const files: Record<string, string> = {
      'a-web.yaml': deployment('web'),
      'b-big.yaml': `${blob('big', 180)}---\n${deployment('big')}`,
    };
    writeAll(mnt, files);
    const r = runCli(['diff', '-i', mnt]);
    t.equal(r.status, 2, r.stderr);
    t.match(r.stderr, /cannot write .*b-big\.yaml \(--in-place\): no space left on device/);
    t.same(readAll(mnt, Object.keys(files)), files, 'every file byte-equal to its old content');
    t.same(temporaries(mnt), [], 'no temporary left');
    const rep = runCli([
      '--report',
      `junit=${join(mnt, 'r.xml')}`,
      '--output-file',
      join(mnt, 'out.yaml'),
      join(mnt, 'b-big.yaml'),
    ]);
    t.equal(rep.status, 2, rep.stderr);
    t.same(
      readdirSync(mnt).sort(),
      Object.keys(files).sort(),
      'neither the output nor the report exists after the failure',
    );
  },
);

t.test('mode, owner and symbolic links inside the root are kept; the link is written through', async (t) => {
  const tmp = makeTempDir('atomic-meta');
  t.teardown(tmp.cleanup);
  const dir = join(tmp.dir, 'm');
  writeAll(dir, { 'web.yaml': deployment('web'), 'real/api.yaml': '' });
  writeFileSync(join(dir, 'real/api.yaml'), deployment('api'));
  symlinkSync('real/api.yaml', join(dir, 'api.yaml'));
  chmodSync(join(dir, 'web.yaml'), 0o640);
  const root = process.getuid?.() === 0;
  if (root) chownSync(join(dir, 'web.yaml'), 4321, 4321);
  const r = runCli(['diff', '-i', join(dir, 'web.yaml'), join(dir, 'api.yaml')]);
  t.equal(r.status, 0, r.stderr);
  const st = statSync(join(dir, 'web.yaml'));
  t.equal(st.mode & 0o7777, 0o640, 'mode kept');
  if (root) t.same([st.uid, st.gid], [4321, 4321], 'owner kept');
  t.match(readFileSync(join(dir, 'web.yaml'), 'utf8'), /istio-proxy/, 'rewritten');
  t.ok(lstatSync(join(dir, 'api.yaml')).isSymbolicLink(), 'the link is still a link');
  t.equal(readlinkSync(join(dir, 'api.yaml')), 'real/api.yaml');
  t.match(readFileSync(join(dir, 'real/api.yaml'), 'utf8'), /istio-proxy/, 'its target holds the new content');
  t.same(temporaries(dir), []);
});

/** A small seeded generator (mulberry32), so a failing run can be replayed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** Runs `diff -i dir` and kills it with `signal`: after `delay` ms, or `afterTemp` ms after its first temporary appears. */
function killedRun(dir: string, signal: NodeJS.Signals, when: { delay?: number; afterTemp?: number }): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'diff', '-i', dir], { stdio: 'ignore' });
    const kill = () => child.kill(signal);
    let poll: NodeJS.Timeout | undefined;
    if (when.delay !== undefined) setTimeout(kill, when.delay);
    else {
      poll = setInterval(() => {
        if (temporaries(dir).length > 0) {
          clearInterval(poll);
          setTimeout(kill, when.afterTemp);
        }
      }, 1);
    }
    child.on('exit', () => {
      if (poll) clearInterval(poll);
      resolve();
    });
  });
}

t.test('SIGTERM and SIGKILL at random points of a multi-file diff -i: every file old or new', async (t) => {
  const tmp = makeTempDir('atomic-kill');
  t.teardown(tmp.cleanup);
  const files: Record<string, string> = {};
  for (let i = 0; i < 10; i++)
    files[`f${String(i).padStart(2, '0')}.yaml`] = `${blob(`data${i}`, 256)}---\n${deployment(`web${i}`)}`;
  const names = Object.keys(files);
  // The new content: one uninterrupted run (timed, to place the kills).
  const baseline = join(tmp.dir, 'baseline');
  writeAll(baseline, files);
  const started = performance.now();
  const b = runCli(['diff', '-i', baseline]);
  const duration = performance.now() - started;
  t.equal(b.status, 0, b.stderr);
  const next = readAll(baseline, names);
  for (const n of names) t.not(next[n], files[n], `${n} changes`);
  const rnd = random(20);
  const outcomes: string[] = [];
  for (let trial = 0; trial < 4; trial++) {
    const dir = join(tmp.dir, `trial${trial}`);
    writeAll(dir, files);
    const signal = trial % 2 === 0 ? 'SIGTERM' : 'SIGKILL';
    // Half the kills at a random moment of the whole run, half at a random moment of its write phase.
    const when =
      trial < 2 ? { delay: Math.round(duration * (0.3 + 0.8 * rnd())) } : { afterTemp: Math.round(rnd() * 40) };
    await killedRun(dir, signal, when);
    const after = readAll(dir, names);
    const bad = names.filter((n) => after[n] !== files[n] && after[n] !== next[n]);
    // SIGTERM is caught between two temporaries: they are removed and the signal raised again.
    if (signal === 'SIGTERM') t.same(temporaries(dir), [], `${signal} ${JSON.stringify(when)}: no temporary left`);
    t.same(bad, [], `${signal} ${JSON.stringify(when)}: every file byte-equal to its old or new content`);
    const fresh = names.filter((n) => after[n] === next[n]).length;
    outcomes.push(`${signal}: ${fresh}/${names.length} new, ${temporaries(dir).length} temporaries left`);
    // SIGKILL cannot be caught: what it may leave is its own temporaries, nothing else.
    t.same(
      readdirSync(dir).filter((n) => !names.includes(n) && !TEMP.test(n)),
      [],
      'no other file appeared',
    );
    if (signal === 'SIGKILL' && temporaries(dir).length > 0) {
      const again = runCli(['diff', '-i', dir]);
      t.equal(again.status, 0, again.stderr);
      t.same(temporaries(dir), [], 'the next run removes what the killed one left');
      t.same(readAll(dir, names), next, 'and writes every file');
    }
    rmSync(dir, { recursive: true, force: true });
  }
  t.comment(outcomes.join('; '));
});

t.test('a link out of the directory is never written through, and a failing batch changes nothing', async (t) => {
  const tmp = makeTempDir('atomic-out');
  t.teardown(tmp.cleanup);
  const outside = join(tmp.dir, 'outside.yaml');
  writeFileSync(outside, deployment('outside'));
  const dir = join(tmp.dir, 'm');
  writeAll(dir, { 'a.yaml': deployment('a') });
  symlinkSync(outside, join(dir, 'b.yaml'));
  const r = runCli(['diff', '-i', dir]);
  t.match(r, { status: 2, stdout: '', stderr: /b\.yaml: resolves outside the root/ });
  t.equal(readFileSync(outside, 'utf8'), deployment('outside'), 'the file outside is untouched');
  t.equal(readFileSync(join(dir, 'a.yaml'), 'utf8'), deployment('a'), 'the file inside is untouched too');
});
