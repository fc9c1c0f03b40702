// The benchmark floor: read the input, `yaml` parseDocument + toString, write it to stdout.
// Plain JS (no tsx) so its start-up is comparable with the bundled CLI.
import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';

const text = readFileSync(process.argv[2] ?? 0, 'utf8');
const doc = parseDocument(text);
if (doc.errors.length) {
  process.stderr.write(`yaml-roundtrip: ${doc.errors[0].message}\n`);
  process.exitCode = 2;
} else {
  process.stdout.write(doc.toString());
}
