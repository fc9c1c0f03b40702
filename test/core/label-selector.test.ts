import t from 'tap';
import type { LabelSelector } from '../../src/model.ts';
import {
  formatSelector,
  matchesSelector,
  parseSelectorString,
  validateSelector,
} from '../../src/selection/label-selector.ts';

const expr = (key: string, operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist', values?: string[]): LabelSelector => ({
  matchExpressions: [{ key, operator, ...(values ? { values } : {}) }],
});

t.test('Kubernetes selector semantics', async (t) => {
  const rows: Array<[LabelSelector, Record<string, string>, boolean, string]> = [
    [{}, {}, true, 'empty selector, no labels'],
    [{}, { a: 'b' }, true, 'empty selector matches everything'],
    [{ matchLabels: {}, matchExpressions: [] }, { a: 'b' }, true, 'empty lists too'],
    [{ matchLabels: { app: 'web' } }, { app: 'web', x: 'y' }, true, 'matchLabels subset'],
    [{ matchLabels: { app: 'web' } }, { app: 'api' }, false, 'matchLabels wrong value'],
    [{ matchLabels: { app: '' } }, {}, false, 'matchLabels empty value needs the key'],
    [{ matchLabels: { app: '' } }, { app: '' }, true, 'matchLabels empty value'],
    [expr('env', 'In', ['a', 'b']), { env: 'b' }, true, 'In'],
    [expr('env', 'In', ['a', 'b']), {}, false, 'In with key missing'],
    [expr('env', 'NotIn', ['a']), {}, true, 'NotIn with key missing'],
    [expr('env', 'NotIn', ['a']), { env: 'a' }, false, 'NotIn listed value'],
    [expr('env', 'NotIn', ['a']), { env: 'c' }, true, 'NotIn other value'],
    [expr('env', 'Exists'), { env: '' }, true, 'Exists with empty value'],
    [expr('env', 'DoesNotExist'), { env: '' }, false, 'DoesNotExist with key present'],
    [{ matchLabels: { app: 'web' }, ...expr('env', 'Exists') }, { app: 'web' }, false, 'matchLabels AND expressions'],
    [expr('toString', 'Exists'), {}, false, 'no prototype keys'],
  ];
  for (const [sel, labels, want, name] of rows) t.equal(matchesSelector(sel, labels), want, name);
});

t.test('selector validation names the offending part', async (t) => {
  const issues = validateSelector(
    {
      matchLabels: { 'bad key!': 'v', ok: 'bad value!' },
      matchExpressions: [
        { key: 'a', operator: 'In' },
        { key: 'b', operator: 'Exists', values: ['x'] },
        { key: 'example.com/x', operator: 'NotIn', values: ['-bad'] },
        { key: 'Example.com/x', operator: 'Exists' },
      ],
    },
    'spec.sel',
  );
  t.same(
    issues.map((i) => i.path),
    [
      'spec.sel.matchLabels[bad key!]',
      'spec.sel.matchLabels[ok]',
      'spec.sel.matchExpressions[0].values',
      'spec.sel.matchExpressions[1].values',
      'spec.sel.matchExpressions[2].values[0]',
      'spec.sel.matchExpressions[3].key',
    ],
  );
  t.match(issues[2]!.message, 'must not be empty when operator is In');
  t.match(issues[3]!.message, 'must be empty when operator is Exists');
  t.same(validateSelector({ matchLabels: { 'app.kubernetes.io/name': 'web', v: '' } }, 'x'), []);
  t.equal(validateSelector({ matchLabels: { ['a'.repeat(64)]: 'v' } }, 'x').length, 1, 'name part over 63 characters');
});

t.test('kubectl selector strings', async (t) => {
  t.same(parseSelectorString('app=web, tier==front,env!=prod'), {
    ok: true,
    selector: {
      matchLabels: { app: 'web', tier: 'front' },
      matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['prod'] }],
    },
  });
  t.same(parseSelectorString('env in (a, b),zone notin (x),legacy,!canary'), {
    ok: true,
    selector: {
      matchExpressions: [
        { key: 'env', operator: 'In', values: ['a', 'b'] },
        { key: 'zone', operator: 'NotIn', values: ['x'] },
        { key: 'legacy', operator: 'Exists' },
        { key: 'canary', operator: 'DoesNotExist' },
      ],
    },
  });
  t.same(parseSelectorString('  '), { ok: true, selector: {} }, 'blank means everything');
  t.match(parseSelectorString('env in (a'), {
    ok: false,
    error: { code: 'BAD_SELECTOR', message: /unbalanced "\("/, position: 7 },
  });
  t.match(parseSelectorString('a=b,,c'), {
    ok: false,
    error: { code: 'BAD_SELECTOR', message: /empty requirement/, position: 4 },
  });
  t.match(parseSelectorString('x, a = b = c'), {
    ok: false,
    error: { code: 'BAD_SELECTOR', message: /cannot parse requirement "a = b = c"/, position: 3 },
  });
  // A key named like an Object.prototype member stays a requirement (it was dropped, leaving "everything").
  const proto = parseSelectorString('__proto__=x');
  t.ok(proto.ok && Object.hasOwn(proto.selector.matchLabels ?? {}, '__proto__'), '__proto__=x is kept');
  t.match(proto.ok && validateSelector(proto.selector, 'sel'), [{ message: /__proto__/ }], 'and reported as a bad key');
  const parsed = parseSelectorString('app=web,env in (a,b),!x');
  t.equal(parsed.ok && formatSelector(parsed.selector), 'app=web,env in (a,b),!x', 'round trip');
  t.equal(formatSelector({}), '<everything>');
});
