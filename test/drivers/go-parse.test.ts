// The Go parsers the drivers read annotation and config values with (src/drivers/go-parse.ts; issue #37, item 4),
// against tables written from Go's documentation and source (strconv/atoi.go, strconv/atob.go, time/format.go, and
// the rows of strconv/atoi_test.go and time/time_test.go read by hand): sign handling, underscores only where the
// base comes from the prefix (base 0), prefixes 0b/0o/0x and a leading 0 for octal, bit sizes and overflow,
// ParseBool's exact set, ParseDuration's units and its ±2^63 ns bounds; then properties over generated strings
// against a reference written from the documented grammar.
import t, { type Test } from 'tap';
import fc from 'fast-check';
import {
  atoi,
  parseBool,
  parseDuration,
  parseInt as parseGoInt,
  parsePort,
  parseUint,
} from '../../src/drivers/go-parse.ts';

const MAX64 = (1n << 64n) - 1n;
type Row<T> = [input: string, want: T | 'syntax' | 'range' | RegExp];

function check<T>(
  t: Test,
  name: string,
  got: { ok: true; value: T } | { ok: false; error: string },
  want: T | 'syntax' | 'range' | RegExp,
): void {
  if (want === 'syntax') t.match(got, { ok: false, error: /: invalid syntax$/ }, name);
  else if (want === 'range') t.match(got, { ok: false, error: /: value out of range$/ }, name);
  else if (want instanceof RegExp) t.match(got, { ok: false, error: want }, name);
  else t.same(got, { ok: true, value: want }, name);
}

t.test('ParseUint base 10, 64 bits: no sign, no underscores, overflow', async (t) => {
  const rows: Array<Row<bigint>> = [
    ['', 'syntax'],
    ['0', 0n],
    ['1', 1n],
    ['12345', 12345n],
    ['012345', 12345n],
    ['12345x', 'syntax'],
    ['98765432100', 98765432100n],
    ['18446744073709551615', MAX64],
    ['18446744073709551616', 'range'],
    ['18446744073709551620', 'range'],
    ['1_2_3_4_5', 'syntax'],
    ['_12345', 'syntax'],
    ['1__2345', 'syntax'],
    ['12345_', 'syntax'],
    ['-0', 'syntax'],
    ['-1', 'syntax'],
    ['+1', 'syntax'],
    ['+4', 'syntax'],
    [' 1', 'syntax'],
    ['1 ', 'syntax'],
    ['0x10', 'syntax'],
    ['１', 'syntax'],
  ];
  for (const [s, want] of rows) check(t, JSON.stringify(s), parseUint(s), want);
  t.equal(
    (parseUint('+4') as { error: string }).error,
    'strconv.ParseUint: parsing "+4": invalid syntax',
    "Go's whole error text",
  );
});

t.test('ParseUint base 0: the prefix decides, underscores only between digits', async (t) => {
  const rows: Array<Row<bigint>> = [
    ['', 'syntax'],
    ['0', 0n],
    ['0x', 'syntax'],
    ['0X', 'syntax'],
    ['1', 1n],
    ['12345', 12345n],
    ['012345', 0o12345n],
    ['0x12345', 0x12345n],
    ['0X12345', 0x12345n],
    ['12345x', 'syntax'],
    ['0xabcdefg123', 'syntax'],
    ['123456789abc', 'syntax'],
    ['0xFFFFFFFFFFFFFFFF', MAX64],
    ['0x10000000000000000', 'range'],
    ['01777777777777777777777', MAX64],
    ['01777777777777777777778', 'syntax'],
    ['02000000000000000000000', 'range'],
    ['0200000000000000000000', 1n << 61n],
    ['0b', 'syntax'],
    ['0B', 'syntax'],
    ['0b101', 5n],
    ['0B101', 5n],
    ['0o', 'syntax'],
    ['0O', 'syntax'],
    ['0o377', 255n],
    ['0O377', 255n],
    ['1_2_3_4_5', 12345n],
    ['_12345', 'syntax'],
    ['1__2345', 'syntax'],
    ['12345_', 'syntax'],
    ['0x_1_2_3_4_5', 0x12345n],
    ['_0x12345', 'syntax'],
    ['0x__12345', 'syntax'],
    ['0x1__2345', 'syntax'],
    ['0x1234__5', 'syntax'],
    ['0x12345_', 'syntax'],
    ['0_1_2_3_4_5', 0o12345n],
    ['_012345', 'syntax'],
    ['0__12345', 'syntax'],
    ['01234__5', 'syntax'],
    ['012345_', 'syntax'],
    ['0o_1_2_3_4_5', 0o12345n],
    ['0b_1_0_1', 5n],
    ['08', 'syntax'],
    ['+0x1', 'syntax'],
  ];
  for (const [s, want] of rows) check(t, JSON.stringify(s), parseUint(s, 0), want);
});

t.test('ParseUint/ParseInt: bases and bit sizes', async (t) => {
  check(t, 'base 16 takes no prefix', parseUint('0x10', 16), 'syntax');
  check(t, 'base 16', parseUint('fF', 16), 255n);
  check(t, 'base 36', parseUint('zZ', 36), 35n * 36n + 35n);
  check(t, 'base 2', parseUint('102', 2), 'syntax');
  check(t, 'base 1', parseUint('1', 1), /: invalid base 1$/);
  check(t, 'base 37', parseUint('1', 37), /: invalid base 37$/);
  check(t, 'bit size 65', parseUint('1', 10, 65), /: invalid bit size 65$/);
  check(t, 'bit size 0 is 64', parseUint('18446744073709551615', 10, 0), MAX64);
  check(t, 'uint32 max', parseUint('4294967295', 10, 32), 4294967295n);
  check(t, 'uint32 over', parseUint('4294967296', 10, 32), 'range');
  check(t, 'uint16 max', parseUint('65535', 10, 16), 65535n);
  check(t, 'uint16 over', parseUint('65536', 10, 16), 'range');
  check(t, 'uint8 over', parseUint('256', 10, 8), 'range');
  check(t, 'overflow is reported before a later bad digit', parseUint('99999999999999999999x', 10, 64), 'range');
  check(t, 'int32 max', parseGoInt('2147483647', 10, 32), 2147483647n);
  check(t, 'int32 over', parseGoInt('2147483648', 10, 32), 'range');
  check(t, 'int32 min', parseGoInt('-2147483648', 10, 32), -2147483648n);
  check(t, 'int32 under', parseGoInt('-2147483649', 10, 32), 'range');
  check(t, 'int base 0 hex with sign', parseGoInt('-0x10', 0, 64), -16n);
  check(t, 'int base 0 underscores after the sign', parseGoInt('-1_000', 0, 64), -1000n);
});

t.test('ParseInt base 10, 64 bits: one optional sign', async (t) => {
  const rows: Array<Row<bigint>> = [
    ['', 'syntax'],
    ['0', 0n],
    ['-0', 0n],
    ['+0', 0n],
    ['1', 1n],
    ['-1', -1n],
    ['+1', 1n],
    ['12345', 12345n],
    ['-12345', -12345n],
    ['012345', 12345n],
    ['-012345', -12345n],
    ['98765432100', 98765432100n],
    ['-98765432100', -98765432100n],
    ['9223372036854775807', (1n << 63n) - 1n],
    ['-9223372036854775807', -((1n << 63n) - 1n)],
    ['9223372036854775808', 'range'],
    ['-9223372036854775808', -(1n << 63n)],
    ['-9223372036854775809', 'range'],
    ['-1_2_3_4_5', 'syntax'],
    ['-_12345', 'syntax'],
    ['_12345', 'syntax'],
    ['1__2345', 'syntax'],
    ['12345_', 'syntax'],
    ['123%45', 'syntax'],
    ['+', 'syntax'],
    ['-', 'syntax'],
    ['+-1', 'syntax'],
    ['--1', 'syntax'],
    ['99999999999999999999', 'range'],
    ['-99999999999999999999', 'range'],
  ];
  for (const [s, want] of rows) check(t, JSON.stringify(s), parseGoInt(s), want);
  t.equal((parseGoInt('12a') as { error: string }).error, 'strconv.ParseInt: parsing "12a": invalid syntax');
  t.equal(
    (parseGoInt('-12a') as { error: string }).error,
    'strconv.ParseInt: parsing "-12a": invalid syntax',
    'the error quotes the input with its sign',
  );
  t.equal((atoi('x') as { error: string }).error, 'strconv.Atoi: parsing "x": invalid syntax');
  check(t, 'Atoi +5', atoi('+5'), 5n);
});

t.test("ParseBool: exactly Go's twelve spellings", async (t) => {
  const rows: Array<Row<boolean>> = [
    ['1', true],
    ['t', true],
    ['T', true],
    ['TRUE', true],
    ['true', true],
    ['True', true],
    ['0', false],
    ['f', false],
    ['F', false],
    ['FALSE', false],
    ['false', false],
    ['False', false],
    ['', 'syntax'],
    ['asdf', 'syntax'],
    ['tRUE', 'syntax'],
    ['yes', 'syntax'],
    ['on', 'syntax'],
    ['enabled', 'syntax'],
    [' true', 'syntax'],
    ['true ', 'syntax'],
    ['2', 'syntax'],
  ];
  for (const [s, want] of rows) check(t, JSON.stringify(s), parseBool(s), want);
});

t.test('ParseDuration: units, fractions, signs, and the ±2^63 ns bounds', async (t) => {
  const s = 1_000_000_000n;
  const rows: Array<Row<bigint>> = [
    ['0', 0n],
    ['5s', 5n * s],
    ['30s', 30n * s],
    ['1478s', 1478n * s],
    ['-5s', -5n * s],
    ['+5s', 5n * s],
    ['-0', 0n],
    ['+0', 0n],
    ['5.0s', 5n * s],
    ['5.6s', 5600000000n],
    ['5.s', 5n * s],
    ['.5s', 500000000n],
    ['1.0s', s],
    ['1.00s', s],
    ['1.004s', 1004000000n],
    ['1.0040s', 1004000000n],
    ['100.00100s', 100001000000n],
    ['10ns', 10n],
    ['11us', 11000n],
    ['12µs', 12000n],
    ['12μs', 12000n],
    ['13ms', 13000000n],
    ['14s', 14n * s],
    ['15m', 900n * s],
    ['16h', 57600n * s],
    ['3h30m', 12600n * s],
    ['10.5s4m', 250500000000n],
    ['-2m3.4s', -123400000000n],
    ['1h2m3s4ms5us6ns', 3723004005006n],
    ['39h9m14.425s', 140_954_425_000_000n],
    ['52763797000ns', 52763797000n],
    ['0.3333333333333333333h', 1200n * s],
    ['9007199254740993ns', (1n << 53n) + 1n],
    ['9223372036854775807ns', (1n << 63n) - 1n],
    ['9223372036854775.807us', (1n << 63n) - 1n],
    ['9223372036s854ms775us807ns', (1n << 63n) - 1n],
    ['-9223372036854775808ns', -(1n << 63n)],
    ['-9223372036854775.808us', -(1n << 63n)],
    ['-9223372036s854ms775us808ns', -(1n << 63n)],
    ['-2562047h47m16.854775808s', -(1n << 63n)],
    ['0.100000000000000000000h', 360n * s],
    ['0.830103483285477580700h', 2988372539827n],
    ['', /^time: invalid duration ""$/],
    ['3', /^time: missing unit in duration "3"$/],
    ['-', /invalid duration/],
    ['s', /invalid duration/],
    ['.', /invalid duration/],
    ['-.', /invalid duration/],
    ['.s', /invalid duration/],
    ['+.s', /invalid duration/],
    ['1d', /^time: unknown unit "d" in duration "1d"$/],
    ['1.5', /missing unit/],
    ['00', /missing unit/],
    ['1 s', /unknown unit " s"/],
    ['1S', /unknown unit "S"/],
    ['9223372036854775810ns', /invalid duration/],
    ['9223372036854775808ns', /invalid duration/],
    ['-9223372036854775809ns', /invalid duration/],
    ['9223372036854776us', /invalid duration/],
    ['3000000h', /invalid duration/],
    ['9223372036854775.808us', /invalid duration/],
    ['9223372036854ms775us808ns', /invalid duration/],
  ];
  for (const [text, want] of rows) check(t, JSON.stringify(text), parseDuration(text), want);
});

t.test('parsePort: Go uint16 then the range the mesh gives', async (t) => {
  const kuma = { min: 1, max: 65535 };
  check(t, '1', parsePort('1', kuma), 1);
  check(t, '65535', parsePort('65535', kuma), 65535);
  check(t, "0 is outside Kuma's range", parsePort('0', kuma), /^out of range 1-65535$/);
  check(t, '65536 overflows uint16', parsePort('65536', kuma), 'range');
  check(t, '+80', parsePort('+80', kuma), 'syntax');
  check(t, '0 in a range from 0', parsePort('0', { min: 0, max: 65535 }), 0);
});

// A reference written from the documented grammar: base-10 ParseUint accepts exactly /^[0-9]+$/ and refuses
// values past 2^bits - 1, reading left to right (an overflow before a bad character is a range error); ParseInt
// adds one optional sign and the two's-complement range.
t.test('properties: ParseUint / ParseInt base 10 over generated strings and bit sizes', async (t) => {
  const alphabet = fc.constantFrom('0', '1', '5', '9', '9', '9', '+', '-', '_', 'x', ' ', 'a');
  const text = fc.oneof(
    fc.array(alphabet, { maxLength: 24 }).map((cs) => cs.join('')),
    fc.bigInt({ min: -(1n << 66n), max: 1n << 66n }).map(String),
  );
  let n = 0;
  fc.assert(
    fc.property(text, fc.constantFrom(8, 16, 32, 64), (s, bits) => {
      const u = parseUint(s, 10, bits);
      // Go reads left to right and stops at the first bad character or at the first overflow.
      const digits = /^[0-9]*/.exec(s)![0];
      if (digits !== '' && BigInt(digits) > (1n << BigInt(bits)) - 1n)
        return !u.ok && u.error.endsWith('value out of range');
      if (!/^[0-9]+$/.test(s)) return !u.ok && u.error.endsWith('invalid syntax');
      const v = BigInt(s);
      const okU = v <= (1n << BigInt(bits)) - 1n;
      if (okU !== u.ok || (u.ok && u.value !== v)) return false;
      const i = parseGoInt(s, 10, bits);
      const half = 1n << BigInt(bits - 1);
      n++;
      return i.ok === v < half && (!i.ok || i.value === v);
    }),
    { numRuns: 2000 },
  );
  fc.assert(
    fc.property(fc.bigInt({ min: -(1n << 65n), max: 1n << 65n }), fc.constantFrom('', '+'), (v, plus) => {
      const s = v < 0n ? String(v) : `${plus}${v}`;
      const i = parseGoInt(s, 10, 64);
      const inRange = v >= -(1n << 63n) && v < 1n << 63n;
      return i.ok === inRange && (!i.ok || i.value === v);
    }),
    { numRuns: 1000 },
  );
  t.ok(n > 100, `${n} numeric strings compared`);
});

t.test('properties: ParseDuration of generated sums of whole units equals their sum in nanoseconds', async (t) => {
  const UNIT: Record<string, bigint> = {
    ns: 1n,
    us: 1000n,
    ms: 1000000n,
    s: 1000000000n,
    m: 60000000000n,
    h: 3600000000000n,
  };
  const part = fc.tuple(fc.bigInt({ min: 0n, max: 1n << 40n }), fc.constantFrom(...Object.keys(UNIT)));
  fc.assert(
    fc.property(fc.constantFrom('', '-', '+'), fc.array(part, { minLength: 1, maxLength: 4 }), (sign, parts) => {
      const text = sign + parts.map(([v, u]) => `${v}${u}`).join('');
      const total = parts.reduce((a, [v, u]) => a + v * UNIT[u]!, 0n);
      const d = parseDuration(text);
      const limit = sign === '-' ? 1n << 63n : (1n << 63n) - 1n;
      if (total > limit) return !d.ok;
      return d.ok && d.value === (sign === '-' ? -total : total);
    }),
    { numRuns: 1000 },
  );
  t.pass('sums of units');
});
