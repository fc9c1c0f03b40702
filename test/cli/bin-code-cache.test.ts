// The bin's V8 code cache (bin/meshinject.js, written by scripts/build.mjs): the cache the build wrote is the
// one the bin uses, and a cache that is missing, from another build, made under other V8 flags (as by another
// Node) or damaged is not used and changes nothing in what the command writes. Runs copies of bin/ and dist/
// (MESHINJECT_CODE_CACHE_REPORT=1 makes the bin say on stderr whether it used the cache).
import t from 'tap';
import fc from 'fast-check';
import { spawnSync } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, makeTempDir } from '../helpers/e2e.ts';
import {
  LARGE_INPUT_CHARS,
  START_INTERRUPT_BUDGET,
  TIER_UP_AFTER_MS,
  TIER_UP_INTERRUPT_BUDGET,
  tierUpSchedule,
} from '../../src/cli/tier-up.ts';

const INPUT = readFileSync(join(ROOT, 'examples/meshinject-simple/catalog.yaml'), 'utf8');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `<root>/bin/meshinject.js ARGS` on the example catalog, reporting the code cache. */
function run(root: string, args: string[] = [], nodeFlags: string[] = [], env: Record<string, string> = {}): Run {
  const r = spawnSync(process.execPath, [...nodeFlags, join(root, 'bin/meshinject.js'), ...args], {
    input: INPUT,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', MESHINJECT_CODE_CACHE_REPORT: '1', ...env },
  });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A copy of bin/ and dist/ in a temp dir, removed when the test ends. */
function copy(t: { teardown(fn: () => void): void }): string {
  const tmp = makeTempDir('code-cache');
  t.teardown(tmp.cleanup);
  cpSync(join(ROOT, 'bin'), join(tmp.dir, 'bin'), { recursive: true });
  cpSync(join(ROOT, 'dist'), join(tmp.dir, 'dist'), { recursive: true });
  return tmp.dir;
}

const CACHE = 'dist/meshinject.cjs.cache';
const reference = run(ROOT);

t.test('the cache the build wrote is used', async (t) => {
  t.equal(reference.status, 0, reference.stderr);
  t.match(reference.stdout, /- name: istio-proxy/, 'the catalog is injected');
  t.match(reference.stderr, /^meshinject: code cache accepted$/m);
  t.notMatch(
    run(ROOT, [], [], { MESHINJECT_CODE_CACHE_REPORT: '' }).stderr,
    /code cache/,
    'no report unless asked for',
  );
});

t.test('without the cache: the same bytes', async (t) => {
  const root = copy(t);
  rmSync(join(root, CACHE));
  const r = run(root);
  t.match(r.stderr, /^meshinject: code cache absent$/m);
  t.same({ status: r.status, stdout: r.stdout }, { status: reference.status, stdout: reference.stdout });
});

t.test('a cache from another build of a bundle of the same length is not used', async (t) => {
  // V8 checks a cache against the source's length only: run on this bundle, the old cache would print the old version.
  const root = copy(t);
  const bundle = join(root, 'dist/meshinject.cjs');
  const other = VERSION.replace(/\d/, (d) => String((Number(d) + 1) % 10));
  const text = readFileSync(bundle, 'latin1');
  // The bundle is minified (scripts/build.mjs): `var VERSION="0.1.0";`.
  t.ok(text.includes(`var VERSION="${VERSION}";`), 'the bundle holds the version');
  const rebuilt = text
    .replace(`var VERSION="${VERSION}";`, `var VERSION="${other}";`)
    .replace(
      /(\/\/# meshinject-build )[0-9a-f]{64}( cache [0-9a-f]{64}\n)$/,
      (_, head: string, tail: string) => `${head}${'0'.repeat(64)}${tail}`,
    );
  t.equal(rebuilt.length, text.length, 'same length');
  t.not(rebuilt, text);
  writeFileSync(bundle, rebuilt, 'latin1');
  const r = run(root, ['--version']);
  t.match(r.stderr, /^meshinject: code cache stale$/m);
  t.equal(r.stdout, `meshinject ${other}\n`, 'the new bundle runs');
});

t.test('a cache V8 rejects (made under other V8 flags, as by another Node) or a damaged one is not used', async (t) => {
  const root = copy(t);
  // The warm-up of the build, under an extra V8 flag: V8 ties a cache to its version and flags.
  const made = run(root, [], ['--no-lazy-feedback-allocation'], { MESHINJECT_WRITE_CODE_CACHE: '1' });
  t.equal(made.status, 0, made.stderr);
  t.not(
    readFileSync(join(root, CACHE)).toString('hex'),
    readFileSync(join(ROOT, CACHE)).toString('hex'),
    'a new cache was written',
  );
  const flags = run(root);
  t.match(flags.stderr, /^meshinject: code cache rejected$/m);
  t.same(
    { status: flags.status, stdout: flags.stdout },
    { status: reference.status, stdout: reference.stdout },
    'other flags',
  );

  const good = readFileSync(join(ROOT, CACHE));
  const damaged = Buffer.from(good);
  damaged.fill(0x5a, 64, 64 + 4096);
  writeFileSync(join(root, CACHE), damaged);
  const d = run(root);
  t.match(d.stderr, /^meshinject: code cache damaged$/m, 'refused before V8 sees it (its digest)');
  t.same({ status: d.status, stdout: d.stdout }, { status: reference.status, stdout: reference.stdout }, 'damaged');

  writeFileSync(join(root, CACHE), good.subarray(0, 64));
  const cut = run(root);
  t.match(cut.stderr, /^meshinject: code cache stale$/m, 'a cache cut after the build line');
  t.same({ status: cut.status, stdout: cut.stdout }, { status: reference.status, stdout: reference.stdout }, 'cut');
});

t.test(
  'a cache changed past its header, the build line kept, is refused before V8 sees it (issue #36 §5)',
  async (t) => {
    // V8 checks a cache's header only: a constant changed in its body would run (here: the version it prints).
    const root = copy(t);
    const good = readFileSync(join(ROOT, CACHE));
    const at = good.indexOf(Buffer.from(`${VERSION}`, 'latin1'), 64);
    t.ok(at > 4096, 'the cache holds the version string past its header');
    const forged = Buffer.from(good);
    forged.write('9.9.9'.slice(0, VERSION.length).padEnd(VERSION.length, '9'), at, 'latin1');
    writeFileSync(join(root, CACHE), forged);
    const r = run(root, ['--version']);
    t.match(r.stderr, /^meshinject: code cache damaged$/m);
    t.equal(r.stdout, `meshinject ${VERSION}\n`, "the bundle's own version: the forged cache did not run");
    // Any byte past the build line, changed: never accepted, the output unchanged.
    fc.assert(
      fc.property(fc.integer({ min: 64, max: good.length - 1 }), fc.integer({ min: 1, max: 255 }), (offset, flip) => {
        const bytes = Buffer.from(good);
        bytes[offset] = bytes[offset]! ^ flip;
        writeFileSync(join(root, CACHE), bytes);
        const b = run(root);
        t.match(b.stderr, /^meshinject: code cache damaged$/m, `byte ${offset} ^ ${flip}`);
        t.same(
          { status: b.status, stdout: b.stdout },
          { status: reference.status, stdout: reference.stdout },
          'the same output',
        );
      }),
      { numRuns: 6 },
    );
  },
);

t.test('the built files are readable by every user (Argo CD runs the plugin as its own uid)', async (t) => {
  const dist = join(ROOT, 'dist');
  t.equal(statSync(dist).mode & 0o555, 0o555, 'dist/ can be listed and entered');
  const files = readdirSync(dist);
  t.ok(files.includes('meshinject.cjs') && files.includes('meshinject.cjs.cache'));
  for (const f of files) t.equal(statSync(join(dist, f)).mode & 0o444, 0o444, `dist/${f}`);
});

t.test('V8 tiers up late in a short run and early in a long one (src/cli/tier-up.ts)', async (t) => {
  // The bin sets the start budget before compiling the bundle: the cache is made and accepted under it.
  const bin = readFileSync(join(ROOT, 'bin/meshinject.js'), 'utf8');
  t.match(
    bin,
    new RegExp(`^const START_FLAGS = '--interrupt-budget=${START_INTERRUPT_BUDGET}';$`, 'm'),
    'the bin starts at START_INTERRUPT_BUDGET',
  );
  t.ok(TIER_UP_INTERRUPT_BUDGET < START_INTERRUPT_BUDGET);
  const flag = `--interrupt-budget=${TIER_UP_INTERRUPT_BUDGET}`;
  let clock = 0;
  const set: string[] = [];
  const small = tierUpSchedule(
    LARGE_INPUT_CHARS - 1,
    clock,
    () => clock,
    (f) => set.push(f),
  );
  // The schedule looks at the clock every 16th call.
  const resources = (n: number) => {
    for (let i = 0; i < n; i++) small();
  };
  clock += TIER_UP_AFTER_MS - 1;
  resources(64);
  t.same(set, [], 'a smaller input, before the time');
  clock += 1;
  resources(15);
  t.same(set, [], 'the clock is read every 16th resource');
  resources(1);
  t.same(set, [flag], 'after TIER_UP_AFTER_MS');
  resources(64);
  t.same(set, [flag], 'once');
  set.length = 0;
  const large = tierUpSchedule(
    LARGE_INPUT_CHARS,
    clock,
    () => clock,
    (f) => set.push(f),
  );
  t.same(set, [flag], 'a large input: at once');
  clock += 10 * TIER_UP_AFTER_MS;
  for (let i = 0; i < 64; i++) large();
  t.same(set, [flag], 'and only once');

  // A run whose input is large changes the flag mid-run: it still injects, and the next run still uses the cache.
  const big = `${INPUT}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: filler\ndata:\n  blob: ${'x'.repeat(LARGE_INPUT_CHARS)}\n`;
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/meshinject.js')], {
    input: big,
    encoding: 'utf8',
    maxBuffer: 64 * 1048576,
    env: { PATH: process.env.PATH ?? '', MESHINJECT_CODE_CACHE_REPORT: '1' },
  });
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, /- name: istio-proxy/, 'the catalog is injected');
  t.ok(r.stdout.includes(`blob: ${'x'.repeat(LARGE_INPUT_CHARS)}\n`), 'the large ConfigMap comes out as it went in');
  t.match(run(ROOT).stderr, /^meshinject: code cache accepted$/m);

  // A warm-up that tiers up (a build slower than a second, as under emulation) still writes a cache that is used.
  const root = copy(t);
  const w = spawnSync(process.execPath, [join(root, 'bin/meshinject.js')], {
    input: big,
    encoding: 'utf8',
    maxBuffer: 64 * 1048576,
    env: { PATH: process.env.PATH ?? '', MESHINJECT_WRITE_CODE_CACHE: '1' },
  });
  t.equal(w.status, 0, w.stderr);
  t.not(
    readFileSync(join(root, CACHE)).toString('hex'),
    readFileSync(join(ROOT, CACHE)).toString('hex'),
    'a new cache was written',
  );
  const after = run(root);
  t.match(after.stderr, /^meshinject: code cache accepted$/m, 'the cache of a warm-up that tiered up');
  t.same({ status: after.status, stdout: after.stdout }, { status: reference.status, stdout: reference.stdout });
});
