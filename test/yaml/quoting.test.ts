/**
 * The scalar rules of `scalars.ts` as the emitter uses them: a string written plain (`emitString`) reads
 * back as that string in every reader meshinject answers to (Go's YAML 1.1 as the fragment reader and
 * Istio read it, the Kubernetes reading, `yaml`'s own YAML 1.1 schema, YAML 1.2 core), and the fast
 * readers resolve it to that string too.
 */
import t from 'tap';
import fc from 'fast-check';
import { parse } from 'yaml';
import { emitString } from '../../src/yaml/emit/emit-block.ts';
import { needsQuotes, resolvePlain } from '../../src/yaml/scalars.ts';
import { CORE_YAML_OPTIONS, FRAGMENT_YAML_OPTIONS, K8S_YAML_OPTIONS } from '../../src/yaml/read/readers.ts';

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);

/** What each reader reads `v: <text>` as. */
function readings(text: string): unknown[] {
  const line = `v: ${text}\n`;
  return [FRAGMENT_YAML_OPTIONS, K8S_YAML_OPTIONS, { version: '1.1' as const }, CORE_YAML_OPTIONS].map(
    (o) => (parse(line, o) as { v: unknown }).v,
  );
}

t.test('look-alikes are quoted, and read back as strings everywhere', async (t) => {
  const lookalikes = [
    'yes',
    'y',
    'on',
    'Off',
    'true',
    '~',
    'null',
    '',
    '0644',
    '09',
    '0x1F',
    '0X1F',
    '0o17',
    '-0o17',
    '0O17',
    '0b101',
    '+0b1',
    '1_000',
    '1:20',
    '.inf',
    '-.Inf',
    '.nan',
    '1e3',
    '1.5e3',
    '.5',
    '1.',
    '.',
    '-.',
    'e5',
    '2024-01-01',
    '15020',
    '-1',
  ];
  for (const s of lookalikes) {
    t.ok(needsQuotes(s), `${JSON.stringify(s)} needs quotes`);
    const q = emitString(s);
    t.match(q, /^["']/, `${JSON.stringify(s)} written quoted: ${q}`);
    t.same(readings(q), [s, s, s, s], `${q} reads back as the string in every reader`);
  }
  // Go's strconv.ParseInt(s, 0, 64) reads these as numbers; they were written plain before.
  for (const s of ['-0o17', '0O17', '0X1F'])
    t.equal(emitString(s), JSON.stringify(s), `${s} is double-quoted (Go reads it as a number)`);
});

t.test('generated strings: written plain only where every reader reads the same string', async (t) => {
  let plain = 0;
  fc.assert(
    fc.property(
      fc.oneof(fc.stringMatching(/^[-+.0-9_:eExXoObBa-fyYnNtT~ ]{1,8}$/), fc.string({ maxLength: 8 })),
      (s) => {
        const out = emitString(s);
        if (/^["'|]/.test(out)) return true;
        plain++;
        const r = readings(out);
        if (!r.every((x) => x === s))
          throw new Error(`${JSON.stringify(s)} written plain, read as ${JSON.stringify(r)}`);
        const v11 = resolvePlain(out, '1.1');
        const v12 = resolvePlain(out, '1.2');
        if ((v11 !== undefined && v11 !== s) || (v12 !== undefined && v12 !== s))
          throw new Error(`${JSON.stringify(s)}: the fast readers resolve it to ${JSON.stringify([v11, v12])}`);
        return true;
      },
    ),
    { numRuns: NUM_RUNS },
  );
  t.ok(plain > NUM_RUNS / 10, `${plain} of ${NUM_RUNS} generated strings written plain`);
});

t.test('resolvePlain: one rule set for YAML 1.1 (Go) and 1.2, declining where readers disagree', async (t) => {
  t.equal(resolvePlain('yes', '1.1'), true, 'yes is a 1.1 boolean');
  t.equal(resolvePlain('yes', '1.2'), undefined, 'yes is declined in 1.2 (a 1.1 reader reads a boolean)');
  t.equal(resolvePlain('0644', '1.1'), undefined, 'legacy octal: declined (yaml reads it)');
  t.equal(resolvePlain('-0x1f', '1.2'), undefined, 'signed hex: a 1.1 number, a 1.2 string: declined');
  t.equal(resolvePlain('1.5e3', '1.1'), 1500, 'exponent float');
  t.equal(resolvePlain('.', '1.1'), '.', 'a float needs a digit');
  t.equal(resolvePlain('2024-01-01', '1.1'), '2024-01-01', 'timestamps are text');
  t.equal(resolvePlain('1:20', '1.1'), undefined, 'base 60: declined (a string to Go, a number to other 1.1 readers)');
  t.equal(resolvePlain('12345678901234567890', '1.2'), undefined, 'beyond 2^53: declined');
  t.equal(resolvePlain('1e400', '1.2'), undefined, 'an infinite float: declined (Go reads the text as a string)');
});

t.test(
  'names, image references and URLs with a colon: written plain without the cache, read back everywhere',
  async (t) => {
    let plain = 0;
    fc.assert(
      fc.property(
        // Starts a plain scalar can have (letters, `/`) and look-alike starts, then names, paths, `:` runs and ends.
        fc.stringMatching(/^[a-zA-Z/._~-][a-zA-Z0-9_./:~ -]{0,12}$/),
        (s) => {
          const out = emitString(s);
          if (/^["'|]/.test(out)) return true;
          plain++;
          const r = readings(out);
          if (!r.every((x) => x === s))
            throw new Error(`${JSON.stringify(s)} written plain, read as ${JSON.stringify(r)}`);
          // The fast readers may decline a form (undefined: left to `yaml`), never read another value.
          const fast = [resolvePlain(out, '1.1'), resolvePlain(out, '1.2')];
          if (fast.some((v) => v !== undefined && v !== s))
            throw new Error(`${JSON.stringify(s)}: the fast readers resolve it to ${JSON.stringify(fast)}`);
          return true;
        },
      ),
      { numRuns: NUM_RUNS },
    );
    t.ok(plain > NUM_RUNS / 4, `${plain} of ${NUM_RUNS} generated strings written plain`);
    for (const s of [
      'docker.io/istio/proxyv2:1.31.0',
      'kubernetes://apis/apps/v1/namespaces/team-0/deployments/cart-0',
      'istiod.istio-system.svc:15012',
    ])
      t.equal(emitString(s), s, `${s} is plain`);
    for (const s of ['key:', 'a: b', 'on', '2024-01-01', '1:20', '0x1F:'])
      t.not(emitString(s), s, `${s} is quoted (it would end a key, or reads otherwise somewhere)`);
  },
);
