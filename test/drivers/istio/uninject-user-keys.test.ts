/**
 * Istio's uninject removes a label or annotation the injection may write only when injecting the uninjected pod
 * again writes it back with the same value (src/drivers/istio/uninject.ts `removeKeysReinjectionWrites`). The check
 * injects a changed copy of the pod (`probeOf`, issue #40: new top-level maps, not a deep copy); a change of that
 * copy that reached the pod kept would remove the user's value. For every key of `INJECTED_LABELS` and
 * `INJECTED_ANNOTATIONS`, set by the user on an Istio-injected Deployment that has no companion record (an input
 * injected by Istio itself or an older meshinject), `spec.mode: uninject` keeps the user's value and gives back
 * the app's pod template otherwise; and a user's own pod sysctl that the gateway template also writes stays.
 * (Mutation-checked: the copy sharing the pod's annotations, or its spec, fails.)
 */
import t from 'tap';
import { parse, stringify } from 'yaml';
import { run } from '../../../src/index.ts';
import { INJECTED_ANNOTATIONS, INJECTED_LABELS } from '../../../src/drivers/istio/uninject.ts';
import { ORIGINAL_ANNOTATION } from '../../../src/patch/status-record.ts';
import { APP, fnConfig } from '../../helpers/uninject-drivers.ts';

const injectConfig = JSON.stringify(fnConfig('istio'));
const uninjectConfig = JSON.stringify({ ...fnConfig('istio'), spec: { ...fnConfig('istio').spec, mode: 'uninject' } });
const injected = run(APP, { functionConfig: injectConfig });
const app = (parse(APP) as any).spec.template;

const USER_VALUE = 'set-by-the-user';

for (const [kind, keys] of [
  ['labels', INJECTED_LABELS],
  ['annotations', INJECTED_ANNOTATIONS],
] as const) {
  t.test(`a user's own ${kind} the injection may write stay through uninject`, async (t) => {
    t.equal(injected.exitCode, 0, 'inject succeeds');
    t.ok(keys.length >= 5, `${keys.length} keys`);
    for (const key of keys) {
      const doc = parse(injected.stdout) as any;
      const meta = doc.spec.template.metadata;
      delete meta.annotations[ORIGINAL_ANNOTATION];
      meta[kind] = { ...(meta[kind] ?? {}), [key]: USER_VALUE };
      const out = run(stringify(doc), { functionConfig: uninjectConfig });
      t.equal(out.exitCode, 0, `${key}: uninject succeeds`);
      const pod = (parse(out.stdout) as any).spec.template;
      const want = structuredClone(app);
      want.metadata[kind] = { ...(want.metadata[kind] ?? {}), [key]: USER_VALUE };
      t.same(pod, want, `${key}: the user's value stays, the injection is gone`);
    }
  });
}

t.test("a user's own sysctl that Istio's gateway template also writes stays through uninject", async (t) => {
  const doc = parse(APP) as any;
  doc.spec.template.spec.securityContext = { sysctls: [{ name: 'net.ipv4.ip_unprivileged_port_start', value: '0' }] };
  const input = stringify(doc);
  const first = run(input, { functionConfig: injectConfig });
  t.equal(first.exitCode, 0, 'inject succeeds');
  const stripped = parse(first.stdout) as any;
  delete stripped.spec.template.metadata.annotations[ORIGINAL_ANNOTATION];
  const out = run(stringify(stripped), { functionConfig: uninjectConfig });
  t.equal(out.exitCode, 0, 'uninject succeeds');
  t.same((parse(out.stdout) as any).spec.template, doc.spec.template, 'the pod template as it was, the sysctl kept');
});
