// Under node:cluster each worker has its own memory store, and under NODE_ENV=production the memory
// store forgets on restart: the receiver says so once at start, naming the stores that do not.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createReceiver, memoryDedupeStore } from 'jobhook';
import { afterEach, expect, it } from 'vitest';
import { SECRET } from '../fixtures.js';

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
  expect(lines[0]).toContain('sqliteDedupeStore (jobhook/sqlite)');
});

it('says nothing when the app chose its store itself', async () => {
  expect(await linesOf('explicit')).toEqual([]);
});

const nodeEnv = process.env.NODE_ENV;
afterEach(() => {
  if (nodeEnv === undefined) delete process.env.NODE_ENV;
  else process.env.NODE_ENV = nodeEnv;
});

function warningsOf(options: { dedupe?: ReturnType<typeof memoryDedupeStore> } = {}): string[] {
  const lines: string[] = [];
  const logger = { error: (line: string) => lines.push(line), warn: (line: string) => lines.push(line) };
  createReceiver({ secret: SECRET, logger, ...options });
  return lines;
}

it('says once, under NODE_ENV=production, that the default memory store forgets on restart, naming jobhook/sqlite', () => {
  process.env.NODE_ENV = 'production';
  const lines = warningsOf();
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain('forgets on restart');
  expect(lines[0]).toContain('jobhook/sqlite');
});

it('says nothing of it outside production, or when the app chose its store', () => {
  process.env.NODE_ENV = 'development';
  expect(warningsOf()).toEqual([]);
  process.env.NODE_ENV = 'production';
  expect(warningsOf({ dedupe: memoryDedupeStore() })).toEqual([]);
});
