/**
 * Reading an input file's bytes as text (src/cli/read-inputs.ts): whatever the bytes, a run reads exactly what a
 * fatal UTF-8 decoder reads (a byte order mark dropped), or refuses the file as not UTF-8. The reader takes a
 * shortcut for ASCII files and reads a regular file into one buffer of its size: generated files of ASCII,
 * other Unicode, a byte order mark and broken sequences hold both to the decoder. The file is a ConfigMap and a
 * comment, which a run writes back unchanged: stdout is the text read.
 */
import t from 'tap';
import fc from 'fast-check';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CliIo } from '../../src/cli.ts';

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 100);
const HEAD = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n# ';

/** One piece of the comment's bytes: printable ASCII, other Unicode (no line breaks or controls), or broken UTF-8. */
const piece = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) }),
  },
  {
    weight: 2,
    arbitrary: fc.string({ unit: fc.constantFrom('é', 'ü', '€', '中', '😀', '\u00a0', '\u2028') }),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      [0xff],
      [0xc3],
      [0x80],
      [0xed, 0xa0, 0x80],
      [0xf4, 0x90, 0x80, 0x80],
      [0xc0, 0xaf],
      [0xef, 0xbb, 0xbf],
    ),
  },
);

async function runOn(dir: string, bytes: Uint8Array): Promise<{ code: number; stdout: string; stderr: string }> {
  const { main } = await import('../../src/cli.ts');
  writeFileSync(join(dir, 'in.yaml'), bytes);
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    stdin: new Uint8Array(0),
    stdout: { isTTY: false, write: (text: string) => out.push(text) },
    stderr: { isTTY: false, write: (text: string) => err.push(text) },
    cwd: dir,
    now: () => 0,
  };
  const code = await main(['in.yaml'], {}, io);
  return { code, stdout: out.join(''), stderr: err.join('') };
}

t.test('an input file reads as a fatal UTF-8 decoder reads it, or is refused as not UTF-8', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'meshinject-decoding-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  let refused = 0;
  let nonAscii = 0;
  await fc.assert(
    fc.asyncProperty(fc.boolean(), fc.array(piece, { maxLength: 8 }), async (bom, pieces) => {
      const parts = pieces.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p)));
      const bytes = Buffer.concat([Buffer.from(bom ? '\ufeff' : ''), Buffer.from(HEAD), ...parts, Buffer.from('\n')]);
      let expected: string | undefined;
      try {
        expected = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      } catch {
        expected = undefined;
      }
      const r = await runOn(dir, bytes);
      if (expected === undefined) {
        refused++;
        if (r.code !== 2 || r.stdout !== '' || !/in\.yaml: not valid UTF-8/.test(r.stderr))
          throw new Error(`broken UTF-8 ${JSON.stringify([...bytes])}: exit ${r.code}, stderr ${r.stderr}`);
        return;
      }
      if (bytes.some((b) => b > 0x7f)) nonAscii++;
      if (r.code !== 0 || r.stdout !== expected)
        throw new Error(`${JSON.stringify(expected)}: exit ${r.code}, stdout ${JSON.stringify(r.stdout)} ${r.stderr}`);
    }),
    { numRuns: NUM_RUNS },
  );
  t.ok(refused > 0 && nonAscii > 0, `${refused} refused, ${nonAscii} read with non-ASCII text`);
});
