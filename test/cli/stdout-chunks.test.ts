/**
 * Issue #40, writing the output: stdout's pieces are encoded into Buffers (`writeStdoutParts`, src/cli/session.ts)
 * when the writer takes bytes (the process's stdout, the contained Worker's relay). The bytes a user gets, the exit
 * code and the stderr line of a failed write are those of writing each piece as text (a writer without `writeBytes`).
 */
import t from 'tap';
import fc from 'fast-check';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CliIo } from '../../src/cli.ts';
import { STDOUT_CHUNK, writeStdoutParts, type OutputState } from '../../src/cli/session.ts';
import { BIN, workspace } from '../helpers/e2e.ts';
import { deployment } from '../helpers/fixtures.ts';

/** A stdout that collects text pieces (the old path), or bytes too (the new one); `failAt`: the write that throws. */
function sink(bytes: boolean, failAt?: { n: number; code: string }) {
  const got: Buffer[] = [];
  const err: string[] = [];
  let writes = 0;
  const check = (b: Buffer): void => {
    writes++;
    if (failAt !== undefined && writes >= failAt.n) {
      throw Object.assign(new Error(`${failAt.code}: write failed`), { code: failAt.code });
    }
    got.push(b);
  };
  const stdout: CliIo['stdout'] = bytes
    ? {
        write: (x: string) => check(Buffer.from(x, 'utf8')),
        writeBytes: (b: Uint8Array) => check(Buffer.from(b)),
      }
    : { write: (x: string) => check(Buffer.from(x, 'utf8')) };
  const io: CliIo = {
    stdin: new Uint8Array(),
    stdout,
    stderr: { write: (x: string) => err.push(x) },
    cwd: '/',
    now: () => 0,
  };
  return { io, got: () => Buffer.concat(got), err: () => err.join(''), writes: () => writes };
}

const piece = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }), // lone surrogates included: U+FFFD's bytes either way
  fc.string({ unit: 'grapheme-ascii', minLength: 30, maxLength: 200 }),
);

t.test('pieces in Buffers: the same bytes as piece by piece, across Buffer ends (property)', async () => {
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 30 }), fc.integer({ min: 4, max: 96 }), (parts, chunk) => {
      const old = sink(false);
      writeStdoutParts({ io: old.io, outputFailed: false }, parts);
      const now = sink(true);
      const state: OutputState = { io: now.io, outputFailed: false };
      writeStdoutParts(state, parts, chunk);
      return now.got().equals(old.got()) && state.exitCode === undefined && now.err() === '';
    }),
  );
});

t.test(
  'a write failing mid-output: one stderr line, exit 2, nothing after it; a closed pipe quiet (property)',
  async () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 50 }), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 6 }),
        fc.constantFrom('ENOSPC', 'EPIPE', 'EIO'),
        (parts, n, code) => {
          const all = Buffer.from(parts.join(''), 'utf8');
          const out = sink(true, { n, code });
          const state: OutputState = { io: out.io, outputFailed: false };
          writeStdoutParts(state, parts, 16);
          const failed = out.writes() >= n;
          const line =
            code === 'EPIPE'
              ? ''
              : `meshinject: error: cannot write the output: ${code === 'ENOSPC' ? 'no space left on device' : `${code}: write failed`}\n`;
          return (
            all.subarray(0, out.got().length).equals(out.got()) &&
            out.writes() <= n &&
            (failed
              ? state.outputFailed && out.err() === line && state.exitCode === (code === 'EPIPE' ? undefined : 2)
              : out.got().equals(all) && out.err() === '')
          );
        },
      ),
    );
  },
);

t.test('a piece longer than a Buffer is written whole, in order', async (t) => {
  const parts = ['a: 1\n', 'é'.repeat(40), 'b: 2\n'];
  const out = sink(true);
  writeStdoutParts({ io: out.io, outputFailed: false }, parts, 16);
  t.equal(out.got().toString('utf8'), parts.join(''));
  t.ok(STDOUT_CHUNK >= 1024 * 1024, 'Buffers of at least 1 MiB by default');
});

/** Workloads whose output is several Buffers long (about 3 Buffers of 2 MiB), with non-ASCII text in it. */
function bigInput(): string {
  const note = 'ünïcødé ✓ '.repeat(2000);
  return Array.from({ length: 120 }, (_, i) =>
    deployment(`w${i}`).replace('metadata:\n', `metadata:\n  annotations:\n    note: "${note}${i}"\n`),
  ).join('---\n');
}

t.test('main: an output of several Buffers is the same bytes through writeBytes as piece by piece', async (t) => {
  const { main } = await import('../../src/cli.ts');
  const input = bigInput();
  const runWith = async (bytes: boolean, failAt?: { n: number; code: string }) => {
    const out = sink(bytes, failAt);
    const code = await main([], {}, { ...out.io, stdin: Buffer.from(input, 'utf8') });
    return { code, out };
  };
  const old = await runWith(false);
  const now = await runWith(true);
  t.equal(old.code, 0);
  t.equal(now.code, 0);
  t.ok(old.out.got().length > 2 * STDOUT_CHUNK, `output of ${old.out.got().length} bytes`);
  t.ok(now.out.got().equals(old.out.got()), 'the same bytes');
  t.ok(now.out.writes() <= Math.ceil(old.out.got().length / STDOUT_CHUNK) + 1, `${now.out.writes()} writes`);
  t.ok(old.out.writes() > 100, `old path: ${old.out.writes()} writes`);
  const full = await runWith(true, { n: 2, code: 'ENOSPC' });
  t.equal(full.code, 2, 'a full disk on the second Buffer: exit 2');
  t.equal(full.out.err(), 'meshinject: error: cannot write the output: no space left on device\n');
  const first = full.out.got().length;
  t.ok(first > STDOUT_CHUNK / 2 && first <= STDOUT_CHUNK, `the first Buffer only (${first} bytes), then nothing`);
  t.ok(old.out.got().subarray(0, first).equals(full.out.got()), 'a prefix of the output');
  const pipe = await runWith(true, { n: 2, code: 'EPIPE' });
  t.same([pipe.code, pipe.out.err()], [0, ''], 'a closed pipe: quiet');
});

t.test('the bin: several Buffers to a file, a pipe, a contained run, a pipe closed early, /dev/full', async (t) => {
  const dir = workspace(t, { 'app.yaml': bigInput() });
  const { main } = await import('../../src/cli.ts');
  const old = sink(false);
  t.equal(await main(['app.yaml'], {}, { ...old.io, cwd: dir }), 0);
  const sh = (cmd: string, env: Record<string, string> = {}) =>
    spawnSync('sh', ['-c', `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} app.yaml ${cmd}`], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, ...env },
    });
  const file = sh('> out.yaml');
  t.equal(file.status, 0, file.stderr);
  t.ok(readFileSync(join(dir, 'out.yaml')).equals(old.got()), 'stdout to a file: the bytes written piece by piece');
  const piped = sh('| cat > piped.yaml');
  t.equal(piped.status, 0, piped.stderr);
  t.ok(readFileSync(join(dir, 'piped.yaml')).equals(old.got()), 'stdout to a pipe: the same bytes');
  // A heap-capped run goes to a Worker (src/cli/contained.ts): its Buffers are relayed and written after it ends.
  const contained = sh('> contained.yaml; echo "exit $?" >&2', { NODE_OPTIONS: '--max-old-space-size=150' });
  t.equal(contained.stderr, 'exit 0\n');
  t.ok(readFileSync(join(dir, 'contained.yaml')).equals(old.got()), 'a contained run: the same bytes');
  const containedFull = sh('> /dev/full; echo "exit $?" >&2', { NODE_OPTIONS: '--max-old-space-size=150' });
  t.equal(containedFull.stderr, 'meshinject: error: cannot write the output: no space left on device\nexit 2\n');
  const head = sh(`| head -c ${STDOUT_CHUNK + 10}`);
  t.equal(head.stderr, '', 'a pipe closed after the first Buffer: no message');
  t.equal(head.stdout.length > 0, true);
  const full = sh('> /dev/full; echo "exit $?" >&2');
  t.equal(full.stderr, 'meshinject: error: cannot write the output: no space left on device\nexit 2\n');
});
