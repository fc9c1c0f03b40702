// End to end: Istio's bookinfo sample (one multi-document file with a license header) through the real
// CLI with test/fixtures/real-world/bookinfo/injection.yaml.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import {
  commentCounts,
  commentDiff,
  headerComments,
  idOf,
  injectionProblems,
  runCli,
  splitStream,
  type Obj,
} from '../helpers/e2e.ts';
import { corpus, needs } from '../helpers/data.ts';

const BOOKINFO = corpus('real-world/bookinfo/bookinfo.yaml');
const INPUT_PATH = BOOKINFO.path ?? '';
const CONFIG = 'test/fixtures/real-world/bookinfo/injection.yaml';
const input = BOOKINFO.path ? readFileSync(BOOKINFO.path, 'utf8') : '';
// The six Deployments of bookinfo.yaml: policy `enabled` and nothing on the pods opts out.
const DEPLOYMENTS = ['details-v1', 'ratings-v1', 'reviews-v1', 'reviews-v2', 'reviews-v3', 'productpage-v1'];

t.test('bookinfo.yaml: every Deployment injected, everything else byte for byte', needs(BOOKINFO), async (t) => {
  const r = runCli(['--config', CONFIG, INPUT_PATH]);
  t.equal(r.status, 0, 'exit 0');
  t.equal(r.stderr, '', 'nothing on stderr without LOG_TO_STDERR');
  const docsIn = splitStream(input);
  const docsOut = splitStream(r.stdout);
  t.equal(docsOut.length, docsIn.length, 'same number of documents (and separators)');
  const injected: string[] = [];
  docsIn.forEach((textIn, i) => {
    const textOut = docsOut[i] ?? '';
    const objIn = parse(textIn) as Obj | null;
    if (objIn?.kind === 'Deployment') {
      const objOut = parse(textOut) as Obj;
      t.same(injectionProblems(objOut, objIn), [], `${idOf(objIn)} injected and valid`);
      t.ok(textOut.startsWith(headerComments(textIn)), `${idOf(objIn)}: comments before the document kept in place`);
      injected.push(String((objIn.metadata as Obj).name));
    } else {
      t.equal(textOut, textIn, `${objIn ? idOf(objIn) : `document ${i}`} unchanged byte for byte`);
    }
  });
  t.same(injected, DEPLOYMENTS, 'the six Deployments, in input order');
  t.ok(
    r.stdout.startsWith('# Copyright Istio Authors\n#\n#   Licensed under the Apache License'),
    'license header first',
  );
  t.same(commentDiff(commentCounts(input), commentCounts(r.stdout)), [], 'every comment line kept exactly once');
});

t.test(
  'bookinfo: stdin and a file argument give the same output; a second run changes nothing',
  needs(BOOKINFO),
  async (t) => {
    const fromFile = runCli(['--config', CONFIG, INPUT_PATH]);
    const fromStdin = runCli(['--config', CONFIG], { input });
    t.equal(fromStdin.status, 0);
    t.equal(fromStdin.stdout, fromFile.stdout, 'stdin == file argument');
    const again = runCli(['--config', CONFIG], { input: fromFile.stdout });
    t.equal(again.status, 0, 'second run exit 0');
    t.equal(again.stdout, fromFile.stdout, 'second run: identical bytes');
  },
);

t.test('bookinfo with LOG_TO_STDERR=true: one line per workload and a summary', needs(BOOKINFO), async (t) => {
  const r = runCli(['--config', CONFIG, INPUT_PATH], { env: { LOG_TO_STDERR: 'true' } });
  t.equal(r.status, 0);
  const lines = r.stderr.trimEnd().split('\n');
  t.equal(lines.length, DEPLOYMENTS.length + 1, 'six result lines + summary');
  DEPLOYMENTS.forEach((name, i) => {
    t.match(
      lines[i],
      new RegExp(`^\\[info\\] apps/v1/Deployment/${name}: injected \\(istio, revision default\\)`),
      name,
    );
  });
  t.equal(lines.at(-1), 'meshinject: 6 injected, 0 skipped, 0 error(s)');
  const quiet = runCli(['--config', CONFIG, INPUT_PATH]);
  t.equal(r.stdout, quiet.stdout, 'LOG_TO_STDERR does not change stdout');
});
