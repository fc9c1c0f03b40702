// The Dockerfile, checked against the files it copies (the image itself cannot be built on these
// machines: no container engine). The build stage is replayed in a temp directory that holds only what
// its COPY lines bring in (with this checkout's node_modules in place of `npm ci`), and the runtime stage's
// COPY --from=build lines are applied to that result: the function must then run from the copied files
// alone, with its V8 code cache. Also: base images pinned by digest on a Node LTS, non-root users, OCI
// labels, .dockerignore agreeing with the COPY sources, and the release workflow pushing both targets.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { parse } from 'yaml';
import { ROOT, makeTempDir } from '../helpers/e2e.ts';

interface Instruction {
  op: string;
  args: string;
}
interface Stage {
  from: string;
  name: string;
  body: Instruction[];
}

/** Instructions of a Dockerfile, continuation lines joined, comments dropped. */
function instructions(text: string): Instruction[] {
  const logical = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  return logical.map((l) => {
    const m = /^(\S+)\s+(.*)$/.exec(l)!;
    return { op: m[1]!.toUpperCase(), args: m[2]! };
  });
}

const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const all = instructions(dockerfile);
const globalArgs = new Map<string, string>();
const stages: Stage[] = [];
for (const ins of all) {
  if (ins.op === 'FROM') {
    const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args)!;
    stages.push({ from: m[1]!, name: m[2] ?? String(stages.length), body: [] });
  } else if (stages.length === 0 && ins.op === 'ARG') {
    const [k, v] = ins.args.split('=');
    globalArgs.set(k!, v ?? '');
  } else stages.at(-1)?.body.push(ins);
}
const stage = (name: string) => stages.find((s) => s.name === name);
const expand = (s: string) => s.replace(/\$\{(\w+)\}/g, (_, k: string) => globalArgs.get(k) ?? `\${${k}}`);
/** `COPY [--from=x] [--chown..] SRC... DEST` -> {from, sources, dest}. */
function copies(s: Stage): { from?: string; sources: string[]; dest: string }[] {
  return s.body
    .filter((i) => i.op === 'COPY')
    .map((i) => {
      const words = i.args.split(/\s+/);
      const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length);
      const paths = words.filter((w) => !w.startsWith('--'));
      return { ...(from ? { from } : {}), sources: paths.slice(0, -1), dest: paths.at(-1)! };
    });
}
const workdir = (s: Stage) => s.body.filter((i) => i.op === 'WORKDIR').at(-1)?.args ?? '/';
const metadataImage = String(
  (parse(readFileSync(join(ROOT, 'functions/meshinject/metadata.yaml'), 'utf8')) as { image: string }).image,
);
const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

t.test('base images: a Node LTS and kustomize, pinned by digest', async (t) => {
  const external = stages.map((s) => expand(s.from)).filter((f) => !stages.some((s) => s.name === f));
  t.ok(external.length >= 3, 'node, kustomize and helm base images');
  const wf = readFileSync(join(ROOT, '.github/workflows/release.yml'), 'utf8');
  for (const arg of globalArgs.keys())
    t.match(wf, new RegExp(`for arg in .*\\b${arg}\\b`), `the release workflow checks the pin of ${arg}`);
  for (const ref of external) t.match(ref, /^[\w./-]+:[\w.-]+@sha256:[0-9a-f]{64}$/, `${ref} pinned by digest`);
  const node = external.filter((r) => r.startsWith('node:'));
  t.ok(node.length >= 1 && node.every((r) => /^node:(22|24)[.-]/.test(r)), `Node 22 or 24 LTS: ${node.join(', ')}`);
  t.equal(
    new Set(node).size,
    1,
    'build and runtime on the same node image (the V8 code cache is only valid for the node that made it)',
  );
  t.notOk(
    all.some((i) => i.op === 'FROM' && /--platform=\$BUILDPLATFORM/.test(i.args)),
    'the build stage runs on the target platform (its code cache is per node binary)',
  );
});

t.test(
  'targets: function (default, non-root, entrypoint = the KRM function) and argocd-cmp (kustomize, uid 999)',
  async (t) => {
    const fn = stage('function');
    const cmp = stage('argocd-cmp');
    t.ok(fn && cmp, 'both targets exist');
    t.equal(stages.at(-1)?.name, 'function', 'function is the default (last) target');
    const userOf = (s: Stage | undefined) => s?.body.filter((i) => i.op === 'USER').at(-1)?.args;
    t.match(userOf(fn), /^65534(:65534)?$/, 'function runs as nobody');
    t.equal(userOf(cmp), '999', 'argocd-cmp runs as uid 999');
    const entry = fn?.body.filter((i) => i.op === 'ENTRYPOINT').at(-1)?.args;
    t.same(JSON.parse(entry ?? 'null'), ['node', '/app/bin/meshinject.js'], 'entrypoint runs bin/meshinject.js');
    t.ok(
      cmp?.body.some((i) => i.op === 'COPY' && /kustomize/.test(i.args)),
      'argocd-cmp adds kustomize',
    );
    t.ok(
      cmp?.body.some((i) => i.op === 'COPY' && /helm/.test(i.args)),
      "and helm (the plugin's Helm variant)",
    );
    for (const label of ['title', 'description', 'source', 'licenses', 'version', 'revision']) {
      t.match(dockerfile, `org.opencontainers.image.${label}=`, `OCI label ${label}`);
    }
  },
);

t.test('.dockerignore sends exactly the COPY sources of the build stage', async (t) => {
  const build = stage('build')!;
  const sources = copies(build)
    .filter((c) => !c.from)
    .flatMap((c) => c.sources);
  for (const src of sources) t.ok(existsSync(join(ROOT, src)), `COPY source ${src} exists`);
  const lines = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  t.equal(lines[0], '*', 'everything is ignored first');
  const included = lines
    .slice(1)
    .filter((l) => l.startsWith('!'))
    .map((l) => l.slice(1).replace(/\/$/, ''));
  t.same([...included].sort(), [...new Set(sources)].sort(), 're-included entries == COPY sources');
  const everyFileCopied = stages
    .flatMap(copies)
    .filter((c) => !c.from)
    .flatMap((c) => c.sources);
  t.same([...new Set(everyFileCopied)].sort(), [...new Set(sources)].sort(), 'no other stage copies from the context');
});

/** Files under a directory, relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => statSync(join(dir, f)).isFile());
}

t.test('replayed build and runtime stages: the function runs from the copied files alone', async (t) => {
  const tmp = makeTempDir('dockerfile');
  t.teardown(tmp.cleanup);
  const build = stage('build')!;
  const runtime = stage('runtime')!;
  const src = join(tmp.dir, 'src'); // the build stage's WORKDIR
  t.equal(workdir(build), '/src');
  mkdirSync(src);
  for (const c of copies(build).filter((x) => !x.from)) {
    for (const s of c.sources) cpSync(join(ROOT, s), join(src, c.dest === './' ? s : c.dest), { recursive: true });
  }
  // `npm ci` installs the locked dependencies; this checkout's node_modules are the same packages.
  symlinkSync(join(ROOT, 'node_modules'), join(src, 'node_modules'));
  const b = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: src, encoding: 'utf8' });
  t.equal(b.status, 0, `the build (npm ci's prepare script) runs from the copied files: ${b.stderr}`);
  const built = filesUnder(join(src, 'dist'));
  t.ok(built.includes('meshinject.cjs.cache'), 'the build writes the V8 code cache');

  const app = join(tmp.dir, 'app'); // the runtime stage's WORKDIR
  t.equal(workdir(runtime), '/app');
  const imageFiles: string[] = [];
  for (const c of copies(runtime).filter((x) => x.from === 'build')) {
    for (const s of c.sources) {
      const to = join(app, c.dest.endsWith('/') ? join(c.dest, s.split('/').pop()!) : c.dest);
      mkdirSync(dirname(to), { recursive: true });
      cpSync(join(src, relative('/src', s)), to, { recursive: true });
      imageFiles.push(relative(app, to));
    }
  }
  for (const f of built) t.ok(imageFiles.includes(`dist/${f}`), `the image has dist/${f}`);
  for (const f of readdirSync(join(ROOT, 'bin'))) t.ok(imageFiles.includes(`bin/${f}`), `the image has bin/${f}`);

  const entry = JSON.parse(
    stage('function')!
      .body.filter((i) => i.op === 'ENTRYPOINT')
      .at(-1)!.args,
  ) as string[];
  const argv = entry.slice(1).map((a) => a.replace(/^\/app\//, `${app}/`));
  const input = readFileSync(join(ROOT, 'examples/meshinject-simple/catalog.yaml'), 'utf8');
  // No node_modules anywhere above the copied app: the bundle must carry its dependencies.
  const r = spawnSync(process.execPath, argv, {
    cwd: tmp.dir,
    input,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '' },
  });
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, /- name: istio-proxy/, 'the copied function injects');
  const v = spawnSync(process.execPath, [...argv, '--version'], { encoding: 'utf8' });
  t.equal(v.stdout, `meshinject ${version}\n`, '--version is the package version the image is tagged with');
});

t.test('release workflow: both targets, multi-arch, tagged by version, the image metadata.yaml names', async (t) => {
  const wf = readFileSync(join(ROOT, '.github/workflows/release.yml'), 'utf8');
  const env = (parse(wf) as { env: Record<string, string> }).env;
  t.equal(env.FUNCTION_IMAGE, metadataImage, 'FUNCTION_IMAGE == metadata.yaml image');
  t.equal(env.CMP_IMAGE, `${metadataImage}-argocd-cmp`);
  t.same(env.PLATFORMS?.split(',').sort(), ['linux/amd64', 'linux/arm64']);
  t.match(wf, /--target function/);
  t.match(wf, /push argocd-cmp /);
  t.match(wf, /\$\{FUNCTION_IMAGE\}:v\$\{VERSION\}/, 'tagged v<version>');
  t.match(wf, /test "\$\{GITHUB_REF_NAME\}" = "v\$\{version\}"/, 'the tag must be the package version');
  t.match(dockerfile, `${metadataImage}:v<version>`, 'the Dockerfile header names the reference');
});
