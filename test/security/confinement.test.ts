// Confinement and strict inputs, tried as a tenant of a shared render server would (issue #19 items 1-2,
// issue #20 items 2 and 5): symbolic links out of the directory given, the Argo CD plugin's own generate script
// with two tenants' checkouts side by side and a config path chosen through ARGOCD_ENV_*, files given as config
// that are not meshinject configs, dangling links, loops, names that are not UTF-8, a directory on stdin, a
// FIFO named like a manifest, unwritable report paths, a closed stderr. Every refusal: exit 2, nothing on
// stdout, the path named as given, never the target's name or content.
import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { chmodSync, closeSync, mkdirSync, openSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { BIN, ROOT, get, makeTempDir, runCli, type Obj } from '../helpers/e2e.ts';
import { installCopy, makeStandIns, shQuote } from '../helpers/runners.ts';

const deployment = (name: string, ns = 'shop') => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  namespace: ${ns}
spec:
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata:
      labels: {app: ${name}}
    spec:
      containers:
      - name: ${name}
        image: ${name}:1
`;
/** Another tenant's secrets: none of these strings may ever reach stdout or stderr. */
const SECRET_VALUES = ['hunter2', 'AKIAIOSFODNN7EXAMPLE', 'wJalrXUtnFEMI'];
const SECRET = `apiVersion: v1
kind: Secret
metadata: {name: billing-db}
stringData:
  DATABASE_URL: postgres://billing:hunter2@db.billing:5432/ledger
  AWS_ACCESS_KEY_ID: AKIAIOSFODNN7EXAMPLE
  AWS_SECRET_ACCESS_KEY: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY
`;
const OTHER_APP = deployment('billing-worker', 'billing');

const docs = (text: string) =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as Obj)
    .filter((d) => d !== null);

function noLeak(t: Test, text: string, what: string): void {
  for (const s of [...SECRET_VALUES, 'billing-worker', 'billing-db'])
    t.notOk(text.includes(s), `${what}: nothing of the other tenant (${s})`);
}

/** Two tenants' checkouts side by side, and the platform's own folder. */
function sharedServer(t: Test) {
  const tmp = makeTempDir('confine');
  t.teardown(tmp.cleanup);
  const a = join(tmp.dir, 'tenant-a/repo/apps/web');
  const b = join(tmp.dir, 'tenant-b/repo/apps/billing');
  const platform = join(tmp.dir, 'platform');
  for (const d of [a, b, platform]) mkdirSync(d, { recursive: true });
  writeFileSync(join(a, 'web.yaml'), deployment('web'));
  writeFileSync(join(b, 'secret.yaml'), SECRET);
  writeFileSync(join(b, 'worker.yaml'), OTHER_APP);
  return { dir: tmp.dir, a, b, platform };
}

t.test('a symbolic link out of the directory given is refused, naming the link, never its target', async (t) => {
  const s = sharedServer(t);
  symlinkSync(join(s.b, 'worker.yaml'), join(s.a, 'zz-absolute.yaml'));
  const abs = runCli([s.a]);
  t.equal(abs.status, 2, abs.stderr);
  t.equal(abs.stdout, '', 'nothing on stdout');
  t.match(abs.stderr, /zz-absolute\.yaml: resolves outside the root/);
  t.notOk(abs.stderr.includes('tenant-b'), 'the target is not named');
  noLeak(t, abs.stdout + abs.stderr, 'absolute link');

  const rel = join(s.dir, 'tenant-a/repo/apps/rel');
  mkdirSync(rel);
  writeFileSync(join(rel, 'web.yaml'), deployment('web'));
  symlinkSync('../../../../tenant-b/repo/apps/billing/secret.yaml', join(rel, 'db.yaml'));
  for (const cwd of [rel, ROOT]) {
    const r = runCli([cwd === rel ? '.' : rel], { cwd });
    t.equal(r.status, 2, `relative link, cwd ${cwd}: exit 2`);
    t.equal(r.stdout, '');
    t.match(r.stderr, /db\.yaml: resolves outside the root/);
    noLeak(t, r.stdout + r.stderr, 'relative link');
  }
  // A link that stays inside the directory is read; a link to a directory is not followed.
  const ok = join(s.dir, 'tenant-a/repo/apps/ok');
  mkdirSync(join(ok, 'sub'), { recursive: true });
  writeFileSync(join(ok, 'sub/api.yaml'), deployment('api'));
  symlinkSync('sub/api.yaml', join(ok, 'api-link.yaml'));
  symlinkSync(s.b, join(ok, 'other-tenant.yaml'));
  const inside = runCli([ok]);
  t.equal(inside.status, 0, inside.stderr);
  t.same(
    docs(inside.stdout).map((d) => get(d, 'metadata', 'name')),
    ['api', 'api'],
    'the link inside is read (and the file itself), the link to a directory is not',
  );
});

t.test(
  '--root and --load-restrictor LoadRestrictionsNone widen the root on purpose; --root also binds --config',
  async (t) => {
    const s = sharedServer(t);
    symlinkSync(join(s.b, 'worker.yaml'), join(s.a, 'worker.yaml'));
    const wide = runCli(['--root', s.dir, s.a]);
    t.equal(wide.status, 0, wide.stderr);
    t.match(wide.stdout, /billing-worker/, '--root over both checkouts: the link is read');
    const none = runCli(['--load-restrictor', 'LoadRestrictionsNone', s.a]);
    t.equal(none.status, 0, none.stderr);
    t.match(none.stdout, /billing-worker/, 'LoadRestrictionsNone: the link is read');
    const bad = runCli(['--load-restrictor', 'LoadRestrictionsAll', s.a]);
    t.match(bad, {
      status: 2,
      stdout: '',
      stderr: /--load-restrictor must be one of LoadRestrictionsRootOnly, LoadRestrictionsNone/,
    });
    const notDir = runCli(['--root', join(s.a, 'web.yaml'), s.a]);
    t.match(notDir, { status: 2, stdout: '', stderr: /--root .*web\.yaml: not a directory/ });

    const cfg = runCli(['--root', s.a, '--config', join(s.b, 'secret.yaml'), join(s.a, 'web.yaml')]);
    t.match(cfg, { status: 2, stdout: '' }, 'a --config outside --root: exit 2');
    t.match(
      cfg.stderr,
      /--config .*tenant-b\/repo\/apps\/billing\/secret\.yaml: resolves outside the root \(--root /,
      'named as given',
    );
    noLeak(t, cfg.stderr, '--config outside the root');
    for (const flag of ['--meshConfigFile', '--valuesFile', '--injectConfigFile', '--operatorFileName']) {
      const r = runCli(['--root', s.a, flag, join(s.b, 'secret.yaml'), join(s.a, 'web.yaml')]);
      t.match(
        r,
        { status: 2, stdout: '', stderr: new RegExp(`${flag} .*secret\\.yaml: resolves outside the root`) },
        `${flag} outside --root`,
      );
    }
    for (const [flag, value] of [
      ['--output-file', join(s.b, 'out.yaml')],
      ['--report', `junit=${join(s.b, 'r.xml')}`],
    ] as const) {
      const r = runCli(['--root', s.a, flag, value, join(s.a, 'web.yaml')]);
      t.match(r, { status: 2, stdout: '', stderr: /resolves outside the root/ }, `${flag} outside --root`);
    }
    // A file named on a plain command line (no Argo CD, no --root) is read as named: its author chose it.
    const named = runCli(['-c', join(ROOT, 'examples/shop/injection.yaml'), join(s.a, 'web.yaml')]);
    t.equal(named.status, 0, named.stderr);
  },
);

/** The generate script of examples/argocd's directory plugin, run as argocd-cmp-server runs it. */
function argoGenerate(s: ReturnType<typeof sharedServer>, appEnv: Record<string, string>, app = s.a) {
  const plugin = parse(readFileSync(join(ROOT, 'examples/argocd/cmp/plugins/directory.yaml'), 'utf8')) as Obj;
  const script = (get(plugin, 'spec', 'generate', 'args') as string[])[0]!;
  const tools = makeStandIns(join(s.dir, 'sidecar'));
  const home = join(s.dir, 'sidecar/home');
  mkdirSync(home, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    PATH: `${tools.bin}:/usr/local/bin:/usr/bin:/bin`,
    HOME: home,
    TMPDIR: join(s.dir, 'sidecar'),
    MESHINJECT_CENTRAL_CONFIG: join(s.platform, 'meshinject.yaml'),
    ARGOCD_APP_NAME: 'web',
    ARGOCD_APP_NAMESPACE: 'shop',
    ...Object.fromEntries(Object.entries(appEnv).map(([k, v]) => [`ARGOCD_ENV_${k}`, v])),
  };
  const r = spawnSync('sh', ['-c', script], { cwd: app, env, encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

t.test(
  'Argo CD plugin, two tenants side by side: a tenant-chosen config path or link never reads the other tenant',
  async (t) => {
    const s = sharedServer(t);
    // The platform's central config (outside every app): read, and it shows in the output.
    writeFileSync(
      join(s.platform, 'meshinject.yaml'),
      'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: central}\nspec:\n  injectedWorkloadAnnotations:\n    Deployment: {platform.example.com/central: "read"}\n',
    );
    const good = argoGenerate(s, {});
    t.equal(good.status, 0, good.stderr);
    t.match(
      good.stdout,
      /platform\.example\.com\/central: "?read/,
      "the platform's central config is read from outside the app",
    );
    t.match(good.stdout, /istio-proxy/, 'injected');

    const attacks: Array<[string, Record<string, string>]> = [
      ['an absolute path to the other tenant', { MESHINJECT_CONFIG: join(s.b, 'secret.yaml') }],
      ['a relative path out of the app', { MESHINJECT_CONFIG: '../../../../tenant-b/repo/apps/billing/secret.yaml' }],
      ['the central config named as the app config', { MESHINJECT_CONFIG: join(s.platform, 'meshinject.yaml') }],
    ];
    for (const [what, env] of attacks) {
      const r = argoGenerate(s, env);
      t.equal(r.status, 2, `${what}: exit 2`);
      t.equal(r.stdout, '', `${what}: nothing on stdout`);
      t.ok(
        r.stderr.includes(`--config ${env.MESHINJECT_CONFIG}: resolves outside the root`),
        `${what}: the path named as given: ${r.stderr}`,
      );
      noLeak(t, r.stderr, what);
    }
    // The default app config (injection.yaml) as a link to the other tenant, and a manifest link.
    symlinkSync(join(s.b, 'secret.yaml'), join(s.a, 'injection.yaml'));
    const cfgLink = argoGenerate(s, {});
    t.match(cfgLink, { status: 2, stdout: '' }, 'injection.yaml linked out: exit 2, nothing on stdout');
    t.match(cfgLink.stderr, /--config injection\.yaml: resolves outside the root/);
    noLeak(t, cfgLink.stderr, 'injection.yaml link');
    chmodSync(s.a, 0o755);
    spawnSync('rm', [join(s.a, 'injection.yaml')]);
    symlinkSync('../../../../tenant-b/repo/apps/billing/worker.yaml', join(s.a, 'worker.yaml'));
    const manifestLink = argoGenerate(s, {});
    t.match(manifestLink, { status: 2, stdout: '' }, 'a manifest linked out: exit 2, nothing on stdout');
    t.match(manifestLink.stderr, /worker\.yaml: resolves outside the root/);
    noLeak(t, manifestLink.stdout + manifestLink.stderr, 'manifest link');

    // The tenant's own file that is not a meshinject config: named by kind and name, no value shown.
    spawnSync('rm', [join(s.a, 'worker.yaml')]);
    writeFileSync(join(s.a, 'creds.yaml'), SECRET.replace('billing-db', 'web-creds'));
    const own = argoGenerate(s, { MESHINJECT_CONFIG: 'creds.yaml' });
    t.equal(own.status, 1, own.stderr);
    t.equal(own.stdout, '');
    t.match(
      own.stderr,
      /--config creds\.yaml: a Secret named "web-creds" \(apiVersion "v1"\) is not a meshinject config; its content is not shown/,
    );
    for (const v of SECRET_VALUES) t.notOk(own.stderr.includes(v), `no value of the file (${v})`);
  },
);

t.test('a config file that is not a meshinject config: kind and name only; known fields quoted short', async (t) => {
  const tmp = makeTempDir('confine-cfg');
  t.teardown(tmp.cleanup);
  const w = (name: string, text: string) => writeFileSync(join(tmp.dir, name), text);
  w('web.yaml', deployment('web'));
  w(
    'app-cm.yaml',
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-settings}\ndata:\n  DATABASE_URL: postgres://billing:hunter2@db/x\n  API_TOKEN: AKIAIOSFODNN7EXAMPLE\n',
  );
  w(
    'deploy.yaml',
    deployment('billing-db', 'billing').replace(
      'image: billing-db:1',
      'image: x\n        env: [{name: PASSWORD, value: hunter2}]',
    ),
  );
  w(
    'mixed.yaml',
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\ndata:\n  mesh: "postgres://billing:hunter2@db/x"\n',
  );
  w(
    'spec.yaml',
    'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: s}\nspec:\n  policy: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"\n  password: hunter2\n',
  );
  const cm = runCli(['-c', 'app-cm.yaml', 'web.yaml'], { cwd: tmp.dir });
  t.match(cm, { status: 1, stdout: '' });
  t.match(
    cm.stderr,
    /--config app-cm\.yaml: a ConfigMap named "app-settings" \(apiVersion "v1"\) is not a meshinject config \(none of its data keys is one meshinject reads\)/,
  );
  const dep = runCli(['-c', 'deploy.yaml', 'web.yaml'], { cwd: tmp.dir });
  t.match(dep, { status: 1, stdout: '', stderr: /a Deployment named "billing-db"/ });
  const mixed = runCli(['-c', 'mixed.yaml', 'web.yaml'], { cwd: tmp.dir });
  t.match(mixed, {
    status: 1,
    stdout: '',
    stderr: /data\.mesh must be a driver name such as istio; got "postgres:\/\/billing:h…" \(31 characters\)/,
  });
  const spec = runCli(['-c', 'spec.yaml', 'web.yaml'], { cwd: tmp.dir });
  t.match(spec, {
    status: 1,
    stdout: '',
    stderr: /spec\.policy must be one of enabled, disabled; got "wJalrXUtnFEMI\/K7MDEN…" \(40 characters\)/,
  });
  t.match(spec.stderr, /spec\.password is not a known field/);
  w('secret.yaml', SECRET);
  const flags = ['--valuesFile', '--meshConfigFile', '--injectConfigFile'].map((flag) => {
    const r = runCli([flag, 'secret.yaml', 'web.yaml'], { cwd: tmp.dir });
    t.match(
      r,
      {
        status: 2,
        stdout: '',
        stderr: new RegExp(
          `${flag} secret\\.yaml: a Secret named "billing-db" \\(apiVersion "v1"\\) is neither the content nor the ConfigMap this flag takes`,
        ),
      },
      `${flag}: a Secret is refused by kind and name`,
    );
    return r;
  });
  for (const r of [cm, dep, mixed, spec, ...flags])
    for (const v of ['hunter2', 'AKIAIOSFODNN7EXAMPLE', 'EXAMPLEKEY'])
      t.notOk(r.stderr.includes(v), `no value quoted whole (${v})`);
});

t.test(
  'inputs are all or nothing: dangling link, loop, non-UTF-8 name, FIFO, directory on stdin: exit 2 naming it',
  async (t) => {
    const tmp = makeTempDir('confine-inputs');
    t.teardown(tmp.cleanup);
    const fresh = (name: string) => {
      const d = join(tmp.dir, name);
      mkdirSync(d);
      writeFileSync(join(d, 'a-web.yaml'), deployment('web'));
      return d;
    };
    const dangling = fresh('dangling');
    symlinkSync('gone.yaml', join(dangling, 'b-db.yaml'));
    const loop = fresh('loop');
    symlinkSync('c-loop.yaml', join(loop, 'b-loop.yaml'));
    symlinkSync('b-loop.yaml', join(loop, 'c-loop.yaml'));
    const bytes = fresh('bytes');
    writeFileSync(
      Buffer.concat([Buffer.from(`${bytes}/caf`), Buffer.from([0xe9]), Buffer.from('.yaml')]),
      deployment('cafe'),
    );
    const cases: Array<[string, string[], RegExp]> = [
      ['a dangling link in a directory', [dangling], /dangling\/b-db\.yaml: a dangling symbolic link/],
      ['a dangling link named', [join(dangling, 'b-db.yaml')], /b-db\.yaml: a dangling symbolic link/],
      ['a link loop in a directory', [loop], /loop\/b-loop\.yaml: a symbolic link loop/],
      ['a name that is not UTF-8', [bytes], /bytes\/caf\\xe9\.yaml: the name is not valid UTF-8/],
    ];
    const fifo = fresh('fifo');
    if (spawnSync('mkfifo', [join(fifo, 'b-pipe.yaml')]).status === 0)
      cases.push(['a FIFO named like a manifest', [fifo], /b-pipe\.yaml: not a regular file/]);
    for (const [what, args, message] of cases) {
      const r = runCli(args);
      t.equal(r.status, 2, `${what}: exit 2`);
      t.equal(r.stdout, '', `${what}: nothing on stdout`);
      t.match(r.stderr, message, `${what}: named`);
      t.notMatch(r.stderr, /internal error|at .*\.ts:/, `${what}: no stack trace`);
    }
    // A name that is not UTF-8 given on the command line (Node decodes argv lossily: found through its bytes).
    const named = spawnSync('sh', ['-c', `${shQuote(process.execPath)} ${shQuote(BIN)} "$(printf 'caf\\351.yaml')"`], {
      cwd: bytes,
      encoding: 'utf8',
    });
    t.match(
      { status: named.status, stdout: named.stdout, stderr: named.stderr },
      { status: 2, stdout: '', stderr: /caf\\xe9\.yaml: the name is not valid UTF-8/ },
      'a non-UTF-8 name on the command line: exit 2 naming it, not "no such file"',
    );
    // A directory on stdin.
    const fd = openSync(tmp.dir, 'r');
    const onStdin = spawnSync(process.execPath, [BIN], { stdio: [fd, 'pipe', 'pipe'], encoding: 'utf8' });
    closeSync(fd);
    t.match(
      { status: onStdin.status, stdout: onStdin.stdout, stderr: onStdin.stderr },
      { status: 2, stdout: '', stderr: /stdin: is a directory/ },
      'a directory on stdin: exit 2',
    );
    // Permission: an unreadable manifest in a directory (as a user other than root: root reads everything).
    const perm = fresh('perm');
    writeFileSync(join(perm, 'b-secret.yaml'), deployment('db'));
    chmodSync(join(perm, 'b-secret.yaml'), 0o000);
    // As root, the run is another user's (nobody): it runs a copy of the program in a folder of this test's own,
    // since the clone may sit in a folder only its owner can enter (mktemp -d makes 0700).
    const uid = process.getuid?.() === 0 ? 65534 : undefined;
    if (uid !== undefined) chmodSync(tmp.dir, 0o755);
    const entry = uid !== undefined ? installCopy(fresh('install')) : BIN;
    // Through sh, which drops NODE_OPTIONS: tap's process tracking adds a preload from the clone's node_modules to
    // every node it sees started (as the runner stand-ins do, test/helpers/runners.ts); the user's run has none.
    const denied = spawnSync('sh', ['-c', 'unset NODE_OPTIONS; exec "$0" "$@"', process.execPath, entry, perm], {
      encoding: 'utf8',
      ...(uid !== undefined ? { uid, gid: 65534 } : {}),
    });
    t.equal(denied.status, 2, `an unreadable manifest: exit 2 (${denied.stderr})`);
    t.equal(denied.stdout, '', 'an unreadable manifest: nothing on stdout');
    t.match(denied.stderr, /perm\/b-secret\.yaml: permission denied/);
  },
);

t.test('everything the run writes is checked before stdout; a closed stderr never changes the exit code', async (t) => {
  const tmp = makeTempDir('confine-out');
  t.teardown(tmp.cleanup);
  writeFileSync(join(tmp.dir, 'web.yaml'), deployment('web'));
  for (const args of [
    ['--report', 'junit=no/such/dir/r.xml'],
    ['--report', 'sarif=web.yaml/r.sarif'],
    ['--output-file', 'missing/out.yaml'],
    ['--output-file', '.'],
  ]) {
    const r = runCli([...args, 'web.yaml'], { cwd: tmp.dir });
    t.equal(r.status, 2, `${args.join(' ')}: exit 2`);
    t.equal(r.stdout, '', `${args.join(' ')}: nothing on stdout`);
    t.match(
      r.stderr,
      new RegExp(args[1]!.replace(/[.*?]/g, '\\$&').replace(/^(junit|sarif)=/, '')),
      `${args.join(' ')}: named`,
    );
  }
  // LOG_TO_STDERR=true and a stderr pipe whose reader is gone: exit 0, stdout complete.
  const script = `{ LOG_TO_STDERR=true ${shQuote(process.execPath)} ${shQuote(BIN)} web.yaml 2>&1 >out.yaml; echo $? > rc; } | true`;
  const r = spawnSync('sh', ['-c', script], {
    cwd: tmp.dir,
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  t.equal(r.status, 0);
  t.equal(readFileSync(join(tmp.dir, 'rc'), 'utf8').trim(), '0', 'exit 0 with a closed stderr');
  const plain = runCli(['web.yaml'], { cwd: tmp.dir });
  t.equal(readFileSync(join(tmp.dir, 'out.yaml'), 'utf8'), plain.stdout, 'stdout complete');
});
