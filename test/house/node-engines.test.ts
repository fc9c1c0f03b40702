// Runtime and install (issue #23, item 7): the Node versions meshinject supports are those `engines` names; every
// installed package (package-lock.json) admits the oldest of them, so `npm ci` prints no EBADENGINE warning on it;
// the machine running the tests is one of them; the images run the current LTS.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { ROOT } from '../helpers/e2e.ts';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { engines?: { node?: string } | string[]; dev?: boolean }>;
};

t.test('every dependency admits the oldest supported Node', async (t) => {
  const oldest = semver.minVersion(pkg.engines.node)!;
  t.ok(oldest, `engines.node ${pkg.engines.node} has a minimum`);
  t.ok(semver.gte(oldest, '20.0.0'), `the oldest supported Node is ${oldest.version}`);
  const refused: string[] = [];
  for (const [path, p] of Object.entries(lock.packages)) {
    const range = !Array.isArray(p.engines) ? p.engines?.node : undefined;
    if (path === '' || !range) continue;
    if (!semver.satisfies(oldest, range)) refused.push(`${path.replace(/^node_modules\//, '')} wants node ${range}`);
  }
  t.same(refused, [], `no package refuses Node ${oldest.version}`);
});

t.test('the Node running the tests is a supported one', async (t) => {
  t.ok(semver.satisfies(process.version, pkg.engines.node), `${process.version} satisfies ${pkg.engines.node}`);
});

t.test('the container images run the current LTS (Node 24)', async (t) => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  t.match(dockerfile, /^ARG NODE_IMAGE=node:24-[a-z-]+@sha256:[0-9a-f]{64}$/m);
  t.ok(semver.satisfies('24.0.0', pkg.engines.node), 'and engines admits it');
});
