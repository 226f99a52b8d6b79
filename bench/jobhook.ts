/**
 * The one place the benchmarks load jobhook from: the built package in `dist/` (what users
 * install), typed by the sources. If the build layout changes, only this file changes. It reads
 * the snapshot of dist/ that run.ts copies next to the compiled bench scripts, and, for a
 * before/after run (BENCH_BASELINE), the snapshot of the build before, which run.ts copies to
 * `baseline/` beside it.
 */
import type * as Core from 'jobhook';
import type * as Bullmq from 'jobhook/bullmq';
import type * as Client from 'jobhook/client';
import type * as Express from 'jobhook/express';
import type * as Fastify from 'jobhook/fastify';
import type * as Hono from 'jobhook/hono';
import type * as Koa from 'jobhook/koa';
import type * as Nats from 'jobhook/nats';
import type * as Node from 'jobhook/node';
import type * as PgBoss from 'jobhook/pg-boss';
import type * as Postgres from 'jobhook/postgres';
import type * as Redis from 'jobhook/redis';
import type * as Sqlite from 'jobhook/sqlite';
import type * as Testing from 'jobhook/testing';

const dist = (file: string) => new URL(`./dist/${file}`, import.meta.url).href;

const core = (await import(dist('index.js'))) as typeof Core;
const bullmq = (await import(dist('bullmq.js'))) as typeof Bullmq;
const client = (await import(dist('client.js'))) as typeof Client;
const express = (await import(dist('express.js'))) as typeof Express;
const fastify = (await import(dist('fastify.js'))) as typeof Fastify;
const hono = (await import(dist('hono.js'))) as typeof Hono;
const koa = (await import(dist('koa.js'))) as typeof Koa;
const nats = (await import(dist('nats.js'))) as typeof Nats;
const node = (await import(dist('node.js'))) as typeof Node;
const pgBoss = (await import(dist('pg-boss.js'))) as typeof PgBoss;
const postgres = (await import(dist('postgres.js'))) as typeof Postgres;
const redis = (await import(dist('redis.js'))) as typeof Redis;
const sqlite = (await import(dist('sqlite.js'))) as typeof Sqlite;
const testing = (await import(dist('testing.js'))) as typeof Testing;

export const { createReceiver, memoryDedupeStore, memoryJobTracker } = core;
export const { createClient } = client;
export const { signDelivery, startGateway } = testing;
export const { bullmqHandoff, runWorker } = bullmq;
export const { expressHandler } = express;
export const { fastifyPlugin } = fastify;
export const { honoHandler } = hono;
export const { koaHandler } = koa;
export const { natsHandoff } = nats;
export const { nodeHandler } = node;
export const { pgBossHandoff } = pgBoss;
export const { postgresDedupeStore, postgresInbox } = postgres;
export const { sqliteDedupeStore, sqliteInbox } = sqlite;
export const { redisDedupeStore, redisJobTracker } = redis;
export type { DedupeStore, Inbox, JobTracker } from 'jobhook/extend';

/** What a before/after run compares: the receiver and the Node adapter of one build. */
export interface Build {
  createReceiver: typeof Core.createReceiver;
  nodeHandler: typeof Node.nodeHandler;
}

/**
 * The build before (BENCH_BASELINE), typed by today's sources: the bench calls only
 * `createReceiver({ secret })`, `onJobCompleted`, `receive` and `nodeHandler(receiver, { path })`,
 * which both builds have.
 */
export async function loadBaseline(): Promise<Build> {
  const baseline = (file: string) => new URL(`./baseline/dist/${file}`, import.meta.url).href;
  const before = (await import(baseline('index.js'))) as typeof Core;
  const beforeNode = (await import(baseline('node.js'))) as typeof Node;
  return { createReceiver: before.createReceiver, nodeHandler: beforeNode.nodeHandler };
}
