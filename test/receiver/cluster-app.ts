// A node:cluster app with one worker that makes a receiver: the worker sends its log lines to the
// primary, which prints them as JSON and exits. Run with `node --import tsx` by cluster.test.ts.
import cluster from 'node:cluster';
// The sources, not the built package: the test runs what it checks.
import { createReceiver, memoryDedupeStore } from '../../src/index.js';

const STORE = process.env.CLUSTER_STORE ?? 'default';

if (cluster.isPrimary) {
  const worker = cluster.fork({ CLUSTER_STORE: STORE });
  worker.on('message', (lines: string[]) => {
    console.log(JSON.stringify(lines));
    worker.kill();
  });
} else {
  const lines: string[] = [];
  const logger = { error: (line: string) => lines.push(line), warn: (line: string) => lines.push(line) };
  createReceiver({
    secret: 'a-secret-of-the-cluster-test',
    logger,
    ...(STORE === 'explicit' && { dedupe: memoryDedupeStore() }),
  });
  process.send!(lines);
}
