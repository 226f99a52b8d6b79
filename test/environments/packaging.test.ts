// Packs the package as npm would publish it, installs the tarball into a scratch project (without
// express or hono), and imports every entry point from an ES module, a CommonJS module and
// TypeScript in both module kinds. Slow-ish (npm pack + npm install), about 10 s.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILD_TIMEOUT_MS, ensureDist, entryNames, root } from '../support/dist.js';

const run = promisify(execFile);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** The environment without npm's per-run variables, so a nested npm acts on its own folder. */
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));

/**
 * The bound on a test that runs a process (node, tsc, the CLI): there to end a hang, not to time
 * the work, which takes several times longer on a busy machine (tsc 5.7 once passed vitest's 20 s).
 */
const PROCESS_TIMEOUT_MS = 180_000;

const subpaths = {
  jobhook: ['createReceiver', 'standardWebhooks', 'hmacSha256', 'JobhookError', 'memoryDedupeStore'],
  'jobhook/extend': ['BodyReadError'],
  'jobhook/express': ['expressHandler'],
  'jobhook/hono': ['honoHandler'],
  'jobhook/node': ['nodeHandler'],
  'jobhook/fastify': ['fastifyPlugin'],
  'jobhook/koa': ['koaHandler'],
  'jobhook/client': ['createClient', 'GatewayError', 'registerWebhook', 'JobFailedError', 'WaitTimeoutError'],
  'jobhook/testing': ['signDelivery', 'startGateway'],
  'jobhook/redis': ['redisDedupeStore'],
  'jobhook/postgres': ['postgresDedupeStore', 'postgresDedupeMigration'],
  'jobhook/sqlite': ['sqliteDedupeStore', 'sqliteJobTracker'],
  'jobhook/bullmq': ['bullmqHandoff', 'runWorker'],
  'jobhook/pg-boss': ['pgBossHandoff', 'runPgBossWorker'],
  'jobhook/nats': ['natsHandoff', 'runNatsWorker'],
  'jobhook/otel': ['otelObserver'],
};

/**
 * What each consumer prints: the exported names per subpath, one delivery received end to end
 * through the installed copy, and whether an error raised inside `jobhook` (receiver.register) is
 * an instance of the class `jobhook/client` exports: one copy of shared code per module format.
 */
const check = (load: string) => `
const subpaths = ${JSON.stringify(Object.keys(subpaths))};
const modules = {};
for (const name of subpaths) modules[name] = ${load};
const { createReceiver } = modules['jobhook'];
const { GatewayError, createClient } = modules['jobhook/client'];
const { signDelivery, startGateway } = modules['jobhook/testing'];

async function main() {
  const secret = 'whsec_' + Buffer.from('packaging-secret').toString('base64');
  const seen = [];
  const receiver = createReceiver({ secret }).onJobCompleted((event) => { seen.push(event.data.task_id); });
  const delivery = signDelivery({ secret, payload: { id: 'evt_1', type: 'job.completed',
    created_at: '2026-11-21T10:00:00Z', data: { task_id: 'task_1', status: 'completed', image_url: 'https://x.test/1.png' } } });
  const answer = await receiver.receive({ headers: delivery.headers, body: delivery.body });

  const gateway = await startGateway();
  let refused;
  try {
    await receiver.register({ client: createClient({ apiKey: 'sk_wrong', baseUrl: gateway.baseUrl }), url: 'https://x.test/hook' });
  } catch (error) {
    refused = { sameClass: error instanceof GatewayError, status: error.status };
  } finally {
    await gateway.close();
  }
  // better-sqlite3 is an optional peer this consumer did not install: the first store says so.
  let sqlite;
  try {
    modules['jobhook/sqlite'].sqliteDedupeStore({ path: 'jobhook.db' });
  } catch (error) {
    sqlite = error.message;
  }
  console.log(JSON.stringify({
    exports: Object.fromEntries(subpaths.map((name) => [name, Object.keys(modules[name]).sort()])),
    status: answer.status,
    seen,
    refused,
    sqlite,
  }));
}
main();
`;

const typed = `
import { createReceiver, JobhookError, type JobCompletedEvent } from 'jobhook';
import { nodeHandler } from 'jobhook/node';
import { createClient, GatewayError } from 'jobhook/client';
import { signDelivery, startGateway } from 'jobhook/testing';
import { redisDedupeStore } from 'jobhook/redis';
import { postgresDedupeStore } from 'jobhook/postgres';
import { sqliteDedupeStore, sqliteJobTracker } from 'jobhook/sqlite';
import { otelObserver } from 'jobhook/otel';
import { BodyReadError, type DedupeStore } from 'jobhook/extend';

export const shared = createReceiver({
  secret: 's',
  dedupe: redisDedupeStore({ redis: { evalsha: async () => 'new', eval: async () => 'new' } }),
});
export const table = postgresDedupeStore({ pool: { query: async () => ({ rows: [] }) } }).table;
// Types only: this file is type-checked, never run (better-sqlite3 is not installed).
export const onFile = (path: string) =>
  createReceiver({ secret: 's', dedupe: sqliteDedupeStore({ path }), reconcile: { client, jobs: sqliteJobTracker({ path }) } });
export const observed = createReceiver({ secret: 's', observer: otelObserver() });
const ownStore: DedupeStore = { leaseMs: 1000, claim: () => 'new', renew: () => true, complete() {}, release() {} };
export const withOwnStore = createReceiver({ secret: 's', dedupe: ownStore });
export const tooLarge: Error = new BodyReadError('too_large');
const receiver = createReceiver({ secret: 'whsec_cGFja2FnaW5n' });
receiver.onJobCompleted((event: JobCompletedEvent) => {
  const url: string = event.data.image_url;
  return url;
});
receiver.onJobFailed((event) => {
  const message: string = event.data.error.message;
  // @ts-expect-error a failed job has no image_url
  const url: string = event.data.image_url;
  return [message, url];
});
export const handler: (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void =
  nodeHandler(receiver);
export const client = createClient({ apiKey: 'k', baseUrl: 'http://127.0.0.1:1' });
export const error: Error = new GatewayError('m', { status: 500, code: 'internal_error' });
export const other: Error = new JobhookError('invalid_options', 'm');
export const signed: { headers: Record<string, string> } = signDelivery({ secret: 's', payload: {} });
export const start: () => Promise<{ baseUrl: string; apiKey: string }> = startGateway;
`;

/**
 * The peers whose types the entry points import, linked from this repository: the frameworks,
 * bullmq (jobhook/bullmq, with ioredis its types need), pg-boss (jobhook/pg-boss), the NATS
 * client (jobhook/nats) and @opentelemetry/api (jobhook/otel).
 */
const frameworkTypes = [
  '@types/node',
  'express',
  '@types/express',
  'hono',
  'fastify',
  'koa',
  '@types/koa',
  'bullmq',
  'ioredis',
  '@ioredis',
  'pg-boss',
  '@nats-io',
  '@opentelemetry/api',
];

const everyAdapter = `
import express from 'express';
import { Hono } from 'hono';
import Fastify from 'fastify';
import Koa from 'koa';
import { expressHandler, keepRawBody } from 'jobhook/express';
import { honoHandler } from 'jobhook/hono';
import { fastifyPlugin } from 'jobhook/fastify';
import { koaHandler } from 'jobhook/koa';

export const expressApp = express().use(express.json({ verify: keepRawBody })).post('/webhooks', expressHandler(receiver));
export const honoApp = new Hono().post('/webhooks', honoHandler(receiver));
export const fastifyApp = Fastify().register(fastifyPlugin(receiver, { path: '/webhooks' }));
export const koaApp = new Koa().use(koaHandler(receiver, { path: '/webhooks' }));

import { Queue } from 'bullmq';
import { bullmqHandoff, runWorker, type WorkerHandle } from 'jobhook/bullmq';

export const queued = createReceiver({ secret: 's', handoff: bullmqHandoff({ queue: new Queue('jobhook') }) });
export const working: Promise<WorkerHandle> = runWorker(queued, { connection: { host: '127.0.0.1' } });

import PgBoss from 'pg-boss';
import { pgBossHandoff, runPgBossWorker, type WorkerHandle as PgBossWorkerHandle } from 'jobhook/pg-boss';

const boss = new PgBoss('postgres://127.0.0.1/db');
export const onPostgres = createReceiver({ secret: 's', handoff: pgBossHandoff({ boss }) });
export const bossWorking: Promise<PgBossWorkerHandle> = runPgBossWorker(onPostgres, { boss });

import type { JetStreamClient } from '@nats-io/jetstream';
import { natsHandoff, runNatsWorker, type WorkerHandle as NatsWorkerHandle } from 'jobhook/nats';

declare const js: JetStreamClient;
export const onNats = createReceiver({ secret: 's', handoff: natsHandoff({ js }) });
export const natsWorking: Promise<NatsWorkerHandle> = runNatsWorker(onNats, { js });
`;

describe('the packed tarball', () => {
  let dir: string;
  let tarball: string;
  let packed: { size: number; unpackedSize: number; files: { path: string }[] };

  beforeAll(async () => {
    await ensureDist();
    dir = await mkdtemp(join(tmpdir(), 'jobhook-pack-'));
    const { stdout } = await run(npm, ['pack', '--json', '--pack-destination', dir], { cwd: root, env });
    packed = (JSON.parse(stdout) as (typeof packed & { filename: string })[])[0]!;
    tarball = join(dir, (packed as unknown as { filename: string }).filename);

    const project = join(dir, 'consumer');
    await run('mkdir', [project]);
    await writeFile(join(project, 'package.json'), '{ "name": "consumer", "private": true }\n');
    // jobhook/otel needs @opentelemetry/api, an optional peer that its users install themselves:
    // this consumer does too (linked from this checkout, so no registry is involved).
    const otelApi = `file:${join(root, 'node_modules/@opentelemetry/api')}`;
    await run(
      npm,
      ['install', tarball, otelApi, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'],
      { cwd: project, env },
    );
    await writeFile(join(project, 'consumer.mjs'), check('await import(name)'));
    await writeFile(join(project, 'consumer.cjs'), check('require(name)'));
    await writeFile(join(project, 'typed.mts'), typed);
    await writeFile(join(project, 'typed.cts'), typed);
    await writeFile(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'node16',
          moduleResolution: 'node16',
          target: 'es2022',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: ['node'],
          typeRoots: [join(root, 'node_modules/@types')],
        },
        files: ['typed.mts', 'typed.cts'],
      }),
    );
  }, BUILD_TIMEOUT_MS);
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const project = () => join(dir, 'consumer');

  it('holds only what users need: dist/, the docs pages the README links to, package.json, README, LICENSE', () => {
    const paths = packed.files.map((file) => file.path).sort();
    const pages = readdirSync(join(root, 'docs'))
      .filter((name) => /\.(md|png)$/.test(name))
      .map((name) => `docs/${name}`);
    expect(paths.filter((path) => !path.startsWith('dist/'))).toEqual(
      ['LICENSE', 'README.md', ...pages, 'package.json'].sort(),
    );
    for (const name of entryNames) {
      expect(paths).toEqual(
        expect.arrayContaining([
          `dist/${name}.js`,
          `dist/${name}.cjs`,
          `dist/${name}.d.ts`,
          `dist/${name}.d.cts`,
        ]),
      );
    }
    expect(paths).toEqual(
      expect.arrayContaining(['dist/testing-web.js', 'dist/testing-web.d.ts', 'dist/cli.js']),
    );
    // package.json `imports`: `#runtime` is node:crypto on Node, Deno and Bun, Web APIs elsewhere.
    for (const form of ['runtime-node', 'runtime-web']) {
      expect(paths).toEqual(expect.arrayContaining([`dist/${form}.js`, `dist/${form}.cjs`]));
    }
    expect(paths.filter((path) => path.endsWith('.map'))).toEqual([]);
  });

  it('installs without express or hono: both are optional peers', () => {
    expect(existsSync(join(project(), 'node_modules/jobhook/package.json'))).toBe(true);
    expect(existsSync(join(project(), 'node_modules/express'))).toBe(false);
    expect(existsSync(join(project(), 'node_modules/hono'))).toBe(false);
    // nor ioredis or pg: jobhook/redis and jobhook/postgres type the clients they are given.
    expect(existsSync(join(project(), 'node_modules/ioredis'))).toBe(false);
    expect(existsSync(join(project(), 'node_modules/pg'))).toBe(false);
    expect(existsSync(join(project(), 'node_modules/better-sqlite3'))).toBe(false);
  });

  it.each([
    ['an ES module', 'consumer.mjs'],
    ['a CommonJS module', 'consumer.cjs'],
  ])(
    'loads every entry point from %s, receives a delivery, shares one GatewayError class',
    async (_kind, file) => {
      const { stdout } = await run(process.execPath, [file], { cwd: project(), env });
      const result = JSON.parse(stdout) as {
        exports: Record<string, string[]>;
        status: number;
        seen: string[];
        refused: unknown;
        sqlite: string;
      };
      for (const [subpath, names] of Object.entries(subpaths)) {
        expect(result.exports[subpath]).toEqual(expect.arrayContaining(names));
      }
      expect(result.status).toBe(200);
      expect(result.seen).toEqual(['task_1']);
      expect(result.refused).toEqual({ sameClass: true, status: 401 });
      expect(result.sqlite).toBe(
        'jobhook/sqlite needs the better-sqlite3 package: run `npm install better-sqlite3`.',
      );
    },
    PROCESS_TIMEOUT_MS,
  );

  it(
    'type-checks a TypeScript consumer in both module kinds (node16 resolution)',
    async () => {
      const tsc = join(root, 'node_modules/typescript/bin/tsc');
      const result = await run(process.execPath, [tsc, '-p', '.'], { cwd: project(), env }).catch(
        (error: { stdout: string }) => ({ stdout: error.stdout, failed: true }),
      );
      expect(result.stdout).toBe('');
    },
    PROCESS_TIMEOUT_MS,
  );

  it(
    'type-checks every entry point with TypeScript 5.7, the oldest supported, and skipLibCheck off',
    async () => {
      // A project beside the consumer: a copy of the installed jobhook, plus the frameworks its
      // adapters take types from (linked: their own dependencies resolve where they really are), so
      // that every published .d.ts, and what it imports, is checked rather than skipped.
      const project57 = join(dir, 'consumer-ts57');
      const modules = join(project57, 'node_modules');
      await mkdir(join(modules, '@types'), { recursive: true });
      await cp(join(project(), 'node_modules/jobhook'), join(modules, 'jobhook'), { recursive: true });
      for (const name of frameworkTypes) {
        await mkdir(join(modules, name, '..'), { recursive: true });
        await symlink(join(root, 'node_modules', name), join(modules, name));
      }
      await writeFile(join(project57, 'typed.mts'), typed + everyAdapter);
      await writeFile(join(project57, 'typed.cts'), typed + everyAdapter);
      await writeFile(
        join(project57, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            module: 'node16',
            moduleResolution: 'node16',
            target: 'es2022',
            strict: true,
            noEmit: true,
            skipLibCheck: false,
            types: ['node'],
            // @types/koa wants @types/content-disposition, but finds the types content-disposition 1
            // ships itself, which lack `Options`: a mismatch between those two packages, not jobhook's.
            paths: { 'content-disposition': [join(root, 'node_modules/@types/content-disposition')] },
          },
          files: ['typed.mts', 'typed.cts'],
        }),
      );
      const tsc57 = join(root, 'node_modules/typescript57/bin/tsc');
      expect((await run(process.execPath, [tsc57, '--version'])).stdout.trim()).toBe('Version 5.7.3');
      const result = await run(process.execPath, [tsc57, '-p', '.'], { cwd: project57, env }).catch(
        (error: { stdout: string }) => ({ stdout: error.stdout, failed: true }),
      );
      expect(result.stdout).toBe('');
      // With skipLibCheck off it checks every peer's types too (bullmq, pg-boss, NATS, the frameworks).
    },
    PROCESS_TIMEOUT_MS,
  );

  it(
    'installs the jobhook binary',
    async () => {
      const bin = join(project(), 'node_modules/.bin/jobhook');
      const { stdout } = await run(bin, ['--version'], { cwd: project(), env });
      expect(stdout.trim()).toBe('0.1.0');
      const help = await run(bin, ['send', '--help'], { cwd: project(), env });
      expect(help.stdout).toMatch(/^Usage: jobhook send/);
    },
    PROCESS_TIMEOUT_MS,
  );
});
