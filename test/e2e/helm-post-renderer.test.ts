/**
 * Issue #39, item 2: meshinject as a Helm post-renderer, run exactly as Helm runs one (there is no helm binary
 * on these machines, so the two call paths are re-enacted from Helm's source):
 *
 * - Helm 3 (`--post-renderer PATH|NAME`, `execRender`, pkg/postrender/exec.go, v3.19): the binary is found as
 *   `exec.LookPath` finds it (a name without `/` on PATH), run without a shell with the `--post-renderer-args`
 *   values as its arguments (one value, one argument) and helm's own environment; the rendered stream
 *   (`---\n# Source: CHART/templates/F\n...` per template) on stdin; stdout is the new stream; a non-zero exit
 *   is helm's error `error while running command PATH. error output:\n<stderr>`.
 * - Helm 4 (`--post-renderer NAME`: a `postrenderer/v1` plugin, pkg/postrenderer/postrenderer.go and
 *   internal/plugin/runtime_subprocess.go): plugin.yaml is validated (`MetadataV1.Validate`), the platform
 *   command chosen (`getPlatformCommand`), `${HELM_PLUGIN_DIR}` expanded, the command split at spaces, the
 *   args appended; the environment is helm's plus HELM_PLUGIN_NAME and HELM_PLUGIN_DIR; every document on stdin
 *   carries `postrenderer.helm.sh/postrender-filename` (`annotateAndMerge`, pkg/action/action.go), which maps
 *   the output back to its template; an empty output is helm's error `post-renderer "NAME" produced empty output`.
 *
 * Neither Helm sets HELM_NAMESPACE from `--namespace` for a post-renderer: it is there when helm's own
 * environment has it.
 */
import t from 'tap';
import fc from 'fast-check';
import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { BIN, ROOT, makeTempDir, type Obj } from '../helpers/e2e.ts';

const FILENAME_ANNOTATION = 'postrenderer.helm.sh/postrender-filename';

/** Helm's environment as a user's shell gives it: this process's, without tap's loader flags. */
function helmEnv(extra: Record<string, string>, path: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: path, ...extra };
  delete env.NODE_OPTIONS;
  delete env.LOG_TO_STDERR;
  delete env.ARGOCD_APP_NAME;
  delete env.ARGOCD_APP_NAMESPACE;
  if (!('HELM_NAMESPACE' in extra)) delete env.HELM_NAMESPACE;
  return env;
}

/** `exec.LookPath`: a name with a `/` as is, else the first executable file of that name on PATH. */
function lookPath(name: string, path: string): string {
  if (name.includes('/')) return name;
  for (const dir of path.split(delimiter)) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      continue;
    }
  }
  throw new Error(`unable to find binary at ${name}`);
}

type Rendered = { ok: true; stream: string; stderr: string } | { ok: false; error: string };

/** A chart's templates: file name (under `mychart/templates/`) to rendered text. */
type Templates = ReadonlyArray<readonly [string, string]>;

/** Helm 3's rendered stream (`renderResources`, pkg/action/action.go v3.19): one `# Source:` block per template. */
function helm3Stream(templates: Templates): string {
  return templates.map(([file, text]) => `---\n# Source: mychart/templates/${file}\n${text}\n`).join('');
}

/** Helm 3's `execRender.Run`. */
function helm3PostRender(
  name: string,
  args: readonly string[],
  templates: Templates,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Rendered {
  const path = lookPath(name, env.PATH ?? '');
  const r = spawnSync(path, args, { input: helm3Stream(templates), env, cwd, encoding: 'utf8' });
  if (r.error) throw r.error;
  if (r.status !== 0) return { ok: false, error: `error while running command ${path}. error output:\n${r.stderr}` };
  return { ok: true, stream: r.stdout, stderr: r.stderr };
}

/** Helm 4's `annotateAndMerge`: every document of every non-empty template, annotated with its file name. */
function helm4Stream(templates: Templates): string {
  const docs: string[] = [];
  for (const [file, text] of templates) {
    for (const d of parseAllDocuments(text)) {
      const o = d.toJS() as Obj | null;
      if (o === null) continue;
      const meta = (o.metadata ??= {}) as Obj;
      meta.annotations = {
        ...((meta.annotations as Obj | undefined) ?? {}),
        [FILENAME_ANNOTATION]: `mychart/templates/${file}`,
      };
      docs.push(stringify(o));
    }
  }
  return docs.join('---\n');
}

/** Helm 4's `MetadataV1.Validate` (internal/plugin/metadata_v1.go) and the post-renderer's type and runtime. */
function validatePlugin(p: Obj): string[] {
  const problems: string[] = [];
  if (typeof p.name !== 'string' || !/^[A-Za-z0-9_-]+$/.test(p.name)) problems.push('invalid plugin `name`');
  if (typeof p.version !== 'string' || !/^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/.test(p.version))
    problems.push('invalid plugin `version`');
  if (p.apiVersion !== 'v1') problems.push('invalid `apiVersion`');
  if (p.type !== 'postrenderer/v1') problems.push('type is not postrenderer/v1');
  if (p.runtime !== 'subprocess') problems.push('runtime is not subprocess');
  const known = new Set(['apiVersion', 'name', 'type', 'runtime', 'version', 'sourceURL', 'config', 'runtimeConfig']);
  for (const k of Object.keys(p))
    if (!known.has(k)) problems.push(`field ${k} not found in type plugin.MetadataV1 (strict)`);
  return problems;
}

/** Helm 4's `getPlatformCommand` for this machine (GOOS linux or darwin, from process.platform). */
function platformCommand(cmds: ReadonlyArray<{ os?: string; arch?: string; command: string; args?: string[] }>): {
  command: string[];
  args: string[];
} {
  const goos = process.platform === 'win32' ? 'windows' : process.platform;
  let chosen: { command: string[]; args: string[] } | undefined;
  let foundOs = false;
  for (const c of cmds) {
    if ((c.os ?? '') !== '' && c.os!.toLowerCase() !== goos) continue;
    if ((c.arch ?? '') !== '') continue;
    if (!foundOs && c.os) {
      chosen = { command: c.command.split(' '), args: c.args ?? [] };
      foundOs = true;
    } else if (!chosen) chosen = { command: c.command.split(' '), args: c.args ?? [] };
  }
  if (!chosen) throw new Error('no plugin command is applicable');
  return chosen;
}

/**
 * Helm 4's post-renderer plugin run: the plugin installed from the package directory (`helm plugin install
 * DIR` links it into the plugins directory), then `runPostrenderer` and the empty-output check.
 */
function helm4PostRender(
  pluginsDir: string,
  extraArgs: readonly string[],
  templates: Templates,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Rendered {
  const dir = join(pluginsDir, 'meshinject');
  const meta = parse(readFileSync(join(dir, 'plugin.yaml'), 'utf8')) as Obj;
  const problems = validatePlugin(meta);
  if (problems.length) return { ok: false, error: `plugin.yaml: ${problems.join('; ')}` };
  const pluginEnv: NodeJS.ProcessEnv = { ...env, HELM_PLUGIN_NAME: String(meta.name), HELM_PLUGIN_DIR: dir };
  const expand = (s: string) => s.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, a, b) => pluginEnv[a ?? b] ?? '');
  const { command, args } = platformCommand((meta.runtimeConfig as Obj).platformCommand as never);
  const argv = [...command.slice(1).map(expand), ...args.map(expand), ...extraArgs];
  const r = spawnSync(expand(command[0]!), argv, {
    input: helm4Stream(templates),
    env: pluginEnv,
    cwd,
    encoding: 'utf8',
  });
  if (r.error) throw r.error;
  if (r.status !== 0)
    return {
      ok: false,
      error: `failed to invoke post-renderer plugin "meshinject": plugin "meshinject" exited with error\n${r.stderr}`,
    };
  if (r.stdout.trim() === '') return { ok: false, error: 'post-renderer "meshinject" produced empty output' };
  return { ok: true, stream: r.stdout, stderr: r.stderr };
}

const deployment = (name: string, namespace?: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}${namespace ? `\n  namespace: ${namespace}` : ''}
  labels:
    app.kubernetes.io/managed-by: Helm
spec:
  selector:
    matchLabels: {app: ${name}}
  template:
    metadata:
      labels: {app: ${name}}
    spec:
      containers:
      - name: ${name}
        image: ${name}:1
`;
const SERVICE = 'apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n  - port: 80\n';
const CONFIG =
  'apiVersion: meshinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: mesh}\nspec:\n  namespaceSelector: {matchLabels: {mesh: "on"}}\n  namespaces:\n  - {name: shop, labels: {mesh: "on"}}\n  - {name: other}\n';

/** A workspace: injection.yaml, a PATH with `meshinject` linked as `npm install -g` links it, a plugins dir. */
function setUp(t: { teardown(fn: () => void): void }): { dir: string; path: string; plugins: string } {
  const { dir, cleanup } = makeTempDir('helm');
  t.teardown(cleanup);
  mkdirSync(join(dir, 'bin'));
  mkdirSync(join(dir, 'plugins'));
  symlinkSync(BIN, join(dir, 'bin', 'meshinject'));
  symlinkSync(ROOT, join(dir, 'plugins', 'meshinject'));
  writeFileSync(join(dir, 'injection.yaml'), CONFIG);
  return {
    dir,
    path: [join(dir, 'bin'), ...(process.env.PATH ?? '').split(delimiter)].join(delimiter),
    plugins: join(dir, 'plugins'),
  };
}

const injected = (o: Obj) => JSON.stringify(o).includes('"name":"istio-proxy"');
const resources = (stream: string) =>
  parseAllDocuments(stream)
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null);

t.test('plugin.yaml is a valid Helm 4 postrenderer/v1 plugin of this package version, and npm packs it', async (t) => {
  const meta = parse(readFileSync(join(ROOT, 'plugin.yaml'), 'utf8')) as Obj;
  t.same(validatePlugin(meta), []);
  t.equal(meta.name, 'meshinject');
  t.equal(
    meta.version,
    JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version,
    'plugin version = package version',
  );
  const pack = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  t.equal(pack.status, 0, pack.stderr);
  const files = (JSON.parse(pack.stdout) as Array<{ files: Array<{ path: string; mode: number }> }>)[0]!.files;
  t.ok(
    files.some((f) => f.path === 'plugin.yaml'),
    'plugin.yaml is in the package',
  );
  t.ok(
    files.some((f) => f.path === 'bin/meshinject.js' && (f.mode & 0o111) !== 0),
    'the command it names is in the package, executable',
  );
});

/** One route through Helm to meshinject: which Helm, where the namespace comes from, and what the chart renders. */
interface Route {
  helm: 3 | 4;
  /** HELM_NAMESPACE in helm's environment, if any. */
  helmNamespace?: string | undefined;
  /** `--post-renderer-args=--default-namespace=NS`, if any. */
  flagNamespace?: string | undefined;
  /** The Deployment's own metadata.namespace, if any. */
  ownNamespace?: string | undefined;
  /** A Service before the Deployment (another template). */
  service: boolean;
}

const NAMESPACE = fc.constantFrom(undefined, 'shop', 'other');
const ROUTE = fc.record({
  helm: fc.constantFrom(3 as const, 4 as const),
  helmNamespace: NAMESPACE,
  flagNamespace: NAMESPACE,
  ownNamespace: NAMESPACE,
  service: fc.boolean(),
});

function runRoute(s: ReturnType<typeof setUp>, r: Route): Rendered {
  const templates: Array<[string, string]> = [];
  if (r.service) templates.push(['service.yaml', SERVICE]);
  templates.push(['deployment.yaml', deployment('web', r.ownNamespace)]);
  const args = ['--config=injection.yaml', ...(r.flagNamespace ? [`--default-namespace=${r.flagNamespace}`] : [])];
  const env = helmEnv(r.helmNamespace ? { HELM_NAMESPACE: r.helmNamespace } : {}, s.path);
  return r.helm === 3
    ? helm3PostRender('meshinject', args, templates, env, s.dir)
    : helm4PostRender(s.plugins, args, templates, env, s.dir);
}

t.test(
  'every route: the namespace is the own one, else --default-namespace, else HELM_NAMESPACE, else default (property)',
  async (t) => {
    const s = setUp(t);
    await fc.assert(
      fc.property(ROUTE, (r) => {
        const out = runRoute(s, r);
        if (!out.ok) throw new Error(out.error);
        const docs = resources(out.stream);
        const web = docs.find((d) => d.kind === 'Deployment')!;
        const ns = r.ownNamespace ?? r.flagNamespace ?? r.helmNamespace ?? 'default';
        if (injected(web) !== (ns === 'shop'))
          throw new Error(`namespace ${ns}: injected ${injected(web)}\n${out.stderr}`);
        if (docs.length !== (r.service ? 2 : 1)) throw new Error('a resource was lost or added');
        if ('namespace' in (web.metadata as Obj) !== (r.ownNamespace !== undefined))
          throw new Error('metadata.namespace was written');
        if (r.helm === 4) {
          for (const d of docs) {
            const file = ((d.metadata as Obj).annotations as Obj | undefined)?.[FILENAME_ANNOTATION];
            if (file !== `mychart/templates/${d.kind === 'Service' ? 'service' : 'deployment'}.yaml`)
              throw new Error(`${d.kind}: the file annotation is ${String(file)}`);
          }
        }
      }),
      {
        numRuns: 30,
        // The issue's cases first: HELM_NAMESPACE alone decides, under both Helms, and the default without it.
        examples: [3, 4].flatMap(
          (helm) =>
            [
              [{ helm, helmNamespace: 'shop', service: true }],
              [{ helm, helmNamespace: 'other', service: false }],
              [{ helm, service: false }],
            ] as Array<[Route]>,
        ),
      },
    );
  },
);

t.test(
  'an empty render: an empty stream and exit 0 (Helm 3); Helm 4 itself refuses an empty post-render output',
  async (t) => {
    const s = setUp(t);
    for (const templates of [[], [['notes.yaml', '']], [['empty.yaml', '# nothing rendered\n']]] as Templates[]) {
      const h3 = helm3PostRender('meshinject', ['--config=injection.yaml'], templates, helmEnv({}, s.path), s.dir);
      t.ok(h3.ok, `Helm 3, ${templates.length} template(s): ${h3.ok ? '' : h3.error}`);
      if (h3.ok) t.equal(resources(h3.stream).length, 0, 'no resources out');
    }
    const h4 = helm4PostRender(s.plugins, ['--config=injection.yaml'], [], helmEnv({}, s.path), s.dir);
    t.same(h4, { ok: false, error: 'post-renderer "meshinject" produced empty output' });
  },
);

t.test('a failure is exit 2 with one line on stderr, which Helm shows; nothing on stdout', async (t) => {
  const s = setUp(t);
  const templates: Templates = [['deployment.yaml', deployment('web')]];
  const h3 = helm3PostRender('meshinject', ['--config=missing.yaml'], templates, helmEnv({}, s.path), s.dir);
  t.notOk(h3.ok);
  if (!h3.ok)
    t.match(
      h3.error,
      /^error while running command .*\/bin\/meshinject\. error output:\nmeshinject: error: --config missing\.yaml: .*no such file/,
    );
  const h4 = helm4PostRender(s.plugins, ['--kube-version=banana'], templates, helmEnv({}, s.path), s.dir);
  t.notOk(h4.ok);
  if (!h4.ok) t.match(h4.error, /exited with error\nmeshinject: --kube-version must be a Kubernetes version/);
  const broken = helm3PostRender('meshinject', [], [['bad.yaml', 'kind: [unclosed\n']], helmEnv({}, s.path), s.dir);
  t.notOk(broken.ok, 'unparseable input fails the render');
});
