import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Tests import the package by its public names, as users do; these point them at the sources.
const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  resolve: {
    alias: [
      { find: /^jobhook$/, replacement: source('./src/index.ts') },
      { find: /^jobhook\/extend$/, replacement: source('./src/extend.ts') },
      { find: /^jobhook\/express$/, replacement: source('./adapters/express.ts') },
      { find: /^jobhook\/hono$/, replacement: source('./adapters/hono.ts') },
      { find: /^jobhook\/node$/, replacement: source('./adapters/node.ts') },
      { find: /^jobhook\/fastify$/, replacement: source('./adapters/fastify.ts') },
      { find: /^jobhook\/koa$/, replacement: source('./adapters/koa.ts') },
      { find: /^jobhook\/client$/, replacement: source('./src/client/index.ts') },
      { find: /^jobhook\/testing$/, replacement: source('./src/testing/index.ts') },
      { find: /^jobhook\/redis$/, replacement: source('./src/redis/index.ts') },
      { find: /^jobhook\/postgres$/, replacement: source('./src/postgres/index.ts') },
      { find: /^jobhook\/sqlite$/, replacement: source('./src/sqlite/index.ts') },
      { find: /^jobhook\/bullmq$/, replacement: source('./src/bullmq/index.ts') },
      { find: /^jobhook\/pg-boss$/, replacement: source('./src/pg-boss/index.ts') },
      { find: /^jobhook\/nats$/, replacement: source('./src/nats/index.ts') },
      { find: /^jobhook\/otel$/, replacement: source('./src/otel/index.ts') },
      // The Node form of the package-internal `#runtime` import (package.json `imports`).
      { find: /^#runtime$/, replacement: source('./src/runtime/node.ts') },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'] },
    // Most files wait on sockets, child processes, brokers and timers more than they compute, so one
    // more file runs at a time than there are cores (Vitest's default, one fewer, is one on 2 cores).
    // Forks, not threads: several tests measure their own process (RSS, open sockets, exit).
    pool: 'forks',
    maxWorkers: availableParallelism() + 1,
    // Bounds against a hang, not deadlines for the work: many tests start processes, brokers and
    // servers, which on a busy machine take many times what they take on an idle one.
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
