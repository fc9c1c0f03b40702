/**
 * Sprig string functions (`quote`, `trunc`, `trimSuffix`, `indent`, `nindent`, ...).
 * Part of `SPRIG_FUNCS` (sprig.ts), which assembles the families in Sprig's documented order.
 */
import { createHash } from 'node:crypto';
import { sprintf } from './fmt.ts';
import { goQuoteString } from './lex.ts';
import {
  str,
  bool,
  isNilIface,
  strval,
  strslice,
  goTrunc,
  trimSet,
  goTrimSpace,
  sprigIndent,
} from './sprig-helpers.ts';
import { ANY, type GoFunc, INT, MAP_ANY, SLICE_STRING, STRING, Value, goFunc } from './value.ts';
import { checkBuild, spendWork } from '../budget.ts';
import { setOwn } from '../../json.ts';

/** Sprig string functions, as `[name, function]` entries. */
export const SPRIG_STRINGS: ReadonlyArray<readonly [string, GoFunc]> = [
  [
    'quote',
    goFunc(
      [ANY],
      (...vs) =>
        str(
          vs
            .filter((v) => !isNilIface(v))
            .map((v) => goQuoteString(strval(v)))
            .join(' '),
        ),
      true,
    ),
  ],
  [
    'squote',
    goFunc(
      [ANY],
      (...vs) =>
        str(
          vs
            .filter((v) => !isNilIface(v))
            .map((v) => `'${strval(v)}'`)
            .join(' '),
        ),
      true,
    ),
  ],
  [
    'cat',
    goFunc(
      [ANY],
      (...vs) => {
        const kept = vs.filter((v) => !isNilIface(v));
        return str(sprintf(kept.map(() => '%v').join(' '), kept));
      },
      true,
    ),
  ],
  ['trunc', goFunc([INT, STRING], (c, s) => str(goTrunc(c.v as number, s.v as string)))],
  ['trim', goFunc([STRING], (s) => str(goTrimSpace(s.v as string)))],
  ['trimAll', goFunc([STRING, STRING], (a, s) => str(trimSet(s.v as string, a.v as string)))],
  [
    'trimSuffix',
    goFunc([STRING, STRING], (a, s) =>
      str(
        (s.v as string).endsWith(a.v as string) && a.v !== ''
          ? (s.v as string).slice(0, -(a.v as string).length)
          : (s.v as string),
      ),
    ),
  ],
  [
    'trimPrefix',
    goFunc([STRING, STRING], (a, s) =>
      str((s.v as string).startsWith(a.v as string) ? (s.v as string).slice((a.v as string).length) : (s.v as string)),
    ),
  ],
  ['upper', goFunc([STRING], (s) => str((s.v as string).toUpperCase()))],
  ['lower', goFunc([STRING], (s) => str((s.v as string).toLowerCase()))],
  [
    'repeat',
    goFunc([INT, STRING], (n, s) => {
      if ((n.v as number) < 0) throw new Error('strings: negative Repeat count');
      checkBuild((n.v as number) * (s.v as string).length, 'repeat');
      return str((s.v as string).repeat(n.v as number));
    }),
  ],
  [
    'replace',
    goFunc([STRING, STRING, STRING], (o, n, s) => {
      const parts = (s.v as string).split(o.v as string);
      checkBuild(
        (s.v as string).length + (parts.length - 1) * Math.max(0, (n.v as string).length - (o.v as string).length),
        'replace',
      );
      return str(parts.join(n.v as string));
    }),
  ],
  ['hasPrefix', goFunc([STRING, STRING], (p, s) => bool((s.v as string).startsWith(p.v as string)))],
  ['hasSuffix', goFunc([STRING, STRING], (p, s) => bool((s.v as string).endsWith(p.v as string)))],
  ['contains', goFunc([STRING, STRING], (sub, s) => bool((s.v as string).includes(sub.v as string)))],
  ['nospace', goFunc([STRING], (s) => str((s.v as string).replace(/\s/gu, '')))],
  [
    'substr',
    goFunc([INT, INT, STRING], (a, b, s) => {
      const bytes = Buffer.from(s.v as string, 'utf8');
      const start = a.v as number;
      const end = b.v as number;
      if (start < 0) return str(bytes.subarray(0, end).toString('utf8'));
      if (end < 0 || end > bytes.length) return str(bytes.subarray(start).toString('utf8'));
      return str(bytes.subarray(start, end).toString('utf8'));
    }),
  ],
  ['indent', goFunc([INT, STRING], (n, s) => str(sprigIndent(n.v as number, s.v as string)))],
  ['nindent', goFunc([INT, STRING], (n, s) => str(`\n${sprigIndent(n.v as number, s.v as string)}`))],
  ['splitList', goFunc([STRING, STRING], (sep, s) => new Value(SLICE_STRING, (s.v as string).split(sep.v as string)))],
  [
    'split',
    goFunc([STRING, STRING], (sep, s) => {
      const out: Record<string, unknown> = {};
      const parts = (s.v as string).split(sep.v as string);
      spendWork(parts.length);
      parts.forEach((p, i) => {
        setOwn(out, `_${i}`, p);
      });
      return new Value(MAP_ANY, out);
    }),
  ],
  [
    'join',
    goFunc([STRING, ANY], (sep, v) => {
      const items = strslice(v);
      checkBuild(
        items.reduce((n, x) => n + x.length, 0) + Math.max(0, items.length - 1) * (sep.v as string).length,
        'join',
      );
      return str(items.join(sep.v as string));
    }),
  ],
  ['toString', goFunc([ANY], (v) => str(strval(v)))],
  ['toStrings', goFunc([ANY], (v) => new Value(SLICE_STRING, strslice(v)))],
  [
    'sha256sum',
    goFunc([STRING], (s) =>
      str(
        createHash('sha256')
          .update(s.v as string, 'utf8')
          .digest('hex'),
      ),
    ),
  ],
  ['b64enc', goFunc([STRING], (s) => str(Buffer.from(s.v as string, 'utf8').toString('base64')))],
  [
    'b64dec',
    goFunc([STRING], (s) => {
      const t = s.v as string;
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(t) || t.length % 4 !== 0) return str('illegal base64 data at input byte 0');
      return str(Buffer.from(t, 'base64').toString('utf8'));
    }),
  ],
];
