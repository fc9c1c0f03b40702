/**
 * The memory the fast block reader's result holds (its data and text tree are kept for the whole run, and
 * copied by every young-generation garbage collection while the input is read): at most `LIMIT` bytes of heap
 * per line read, on a manifest of the usual shape (many small mappings). Issue #40: the entries of each
 * mapping and sequence are held in arrays of their exact length (an array grown by `push` has room for 17,
 * which made half the tree).
 */
import t from 'tap';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { readBlockStream } from '../../src/yaml/read/manifest-reader.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** One workload of the bench's shape: 40 lines, 17 mappings (most with one to three keys), 4 sequences. */
function workload(i: number): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-${i}
  namespace: team-${i % 7}
  labels:
    app.kubernetes.io/name: web
    app.kubernetes.io/part-of: shop
spec:
  replicas: 1
  selector:
    matchLabels:
      app.kubernetes.io/name: web
  template:
    metadata:
      labels:
        app.kubernetes.io/name: web
      annotations:
        prometheus.io/scrape: "true"
    spec:
      containers:
      - name: web
        image: busybox:1.36
        ports:
        - name: http
          containerPort: ${8000 + (i % 1000)}
          protocol: TCP
        env:
        - name: LOG_LEVEL
          value: info
        resources:
          requests:
            cpu: ${100 + (i % 50)}m
            memory: 256Mi
        readinessProbe:
          httpGet:
            path: /healthz
            port: 8080
      volumes:
      - name: config
        configMap:
          name: web-config
`;
}

/** Bytes of heap per line the reader's result holds (measured: 341 with arrays grown by `push`, 248 with exact-length arrays). */
const LIMIT = 295;

t.test('the reader holds at most LIMIT bytes of heap per line it read', async (t) => {
  const count = 3000;
  const text = Array.from({ length: count }, (_, i) => workload(i)).join('---\n');
  const lines = text.split('\n').length;
  gc();
  const before = process.memoryUsage().heapUsed;
  const docs = readBlockStream(text);
  gc();
  const held = process.memoryUsage().heapUsed - before;
  t.equal(docs?.length, count, 'every document read');
  t.ok(
    docs?.every((d) => !('declined' in d)),
    'none declined',
  );
  const perLine = held / lines;
  t.ok(perLine <= LIMIT, `${perLine.toFixed(0)} bytes per line (at most ${LIMIT})`);
});
