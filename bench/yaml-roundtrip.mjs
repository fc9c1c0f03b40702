// The benchmark floor: read the input, `yaml` parseAllDocuments + toString of each document, write it to stdout.
// Plain JS (no tsx) so its start-up is comparable with the bundled CLI.
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';

const text = readFileSync(process.argv[2] ?? 0, 'utf8');
const docs = parseAllDocuments(text);
const list = Array.isArray(docs) ? docs : [];
const bad = list.find((d) => d.errors.length);
if (bad) {
  process.stderr.write(`yaml-roundtrip: ${bad.errors[0].message}\n`);
  process.exitCode = 2;
} else {
  process.stdout.write(list.map((d) => d.toString()).join(''));
}
