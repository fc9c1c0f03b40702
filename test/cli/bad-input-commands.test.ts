/**
 * A document Kubernetes cannot read, anywhere in the input, is bad input for every command: exit 2 and one
 * `meshinject: error:` line naming the file, never an internal error with a stack (found with `migrate` on
 * examples/argocd, whose Helm template holds `{{ .Release.Name }}` as a key: documents are composed as they
 * are read, after the inputs were parsed).
 */
import t from 'tap';
import { runCli, workspace } from '../helpers/e2e.ts';
import { deployment } from '../helpers/fixtures.ts';

const CONFIG =
  'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: c}\nspec: {mesh: istio, policy: enabled}\n';

/** Shapes of a document that cannot be read, each placed after a good document in the same file. */
const BAD: ReadonlyArray<[string, string]> = [
  ['a mapping used as a key', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n'],
  ['a duplicate key', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n'],
  ['a syntax error', 'apiVersion: v1\nkind: ConfigMap\nmetadata: [unclosed\n'],
];

const COMMANDS: ReadonlyArray<string[]> = [
  ['inject'],
  ['uninject'],
  ['check'],
  ['explain'],
  ['diff'],
  ['migrate', '--to', 'ambient', '--namespace', 'shop'],
];

for (const [what, doc] of BAD) {
  for (const cmd of COMMANDS) {
    t.test(`${cmd[0]}: ${what} in a later document is bad input`, async (t) => {
      const dir = workspace(t, {
        'injection.yaml': CONFIG,
        'apps.yaml': `${deployment('web', { namespace: 'shop' })}---\n${doc}`,
      });
      const r = runCli([...cmd, '-c', 'injection.yaml', 'apps.yaml'], { cwd: dir });
      t.equal(r.status, 2, r.stderr);
      t.match(r.stderr, /^meshinject: error: .*apps\.yaml/m, 'one error line naming the file');
      t.notMatch(r.stderr, /internal error|\n\s+at /, 'no internal error, no stack');
    });
  }
}
