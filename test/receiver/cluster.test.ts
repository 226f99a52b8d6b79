// Under node:cluster each worker has its own memory store: the receiver says so once at start.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const run = promisify(execFile);

async function linesOf(store: 'default' | 'explicit'): Promise<string[]> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'test/receiver/cluster-app.ts'], {
    env: { ...process.env, CLUSTER_STORE: store },
    timeout: 100_000, // against a hang: tsx and a forked worker start slowly on a busy machine
  });
  return JSON.parse(stdout.trim()) as string[];
}

it('warns once in a cluster worker that keeps the default memory store', async () => {
  const lines = await linesOf('default');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain('cluster worker with the in-memory dedupe store');
});

it('says nothing when the app chose its store itself', async () => {
  expect(await linesOf('explicit')).toEqual([]);
});
