// The real services the store suites need: Redis and PostgreSQL at JOBHOOK_REDIS_URL and
// JOBHOOK_DATABASE_URL. Each suite gets its own key prefix or schema and removes only that.
// With CI=true a missing service fails the run; elsewhere the suite is skipped with one line that
// says how to start the service.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import pg from 'pg';

export const REDIS_URL = process.env.JOBHOOK_REDIS_URL || 'redis://127.0.0.1:6379';
export const DATABASE_URL = process.env.JOBHOOK_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
export const NATS_URL = process.env.JOBHOOK_NATS_URL || 'nats://127.0.0.1:4222';

const HOW_TO_START = {
  Redis: `redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no`,
  PostgreSQL: 'pg_ctlcluster --skip-systemctl-redirect 15 main start',
  'NATS JetStream': 'nats-server -js -a 127.0.0.1 -p 4222 &',
};

/** A short, unique tag for this run's keys, schemas and tables. */
export const runTag = () => `t${Date.now().toString(36)}${randomBytes(4).toString('hex')}`;

async function probe(service: keyof typeof HOW_TO_START, url: string, check: () => Promise<unknown>) {
  try {
    await check();
    return true;
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    if (process.env.CI === 'true') {
      throw new Error(`${service} at ${url} is needed with CI=true, but: ${why}`, { cause: error });
    }
    console.warn(`Skipping: no ${service} at ${url} (${why}); start one with: ${HOW_TO_START[service]}`);
    return false;
  }
}

/** Whether Redis answers at REDIS_URL (throws instead when CI=true). Use with `describe.runIf`. */
export function redisAvailable(): Promise<boolean> {
  return probe('Redis', REDIS_URL, async () => {
    const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 2000 });
    redis.on('error', () => undefined);
    try {
      await redis.connect();
      await redis.ping();
    } finally {
      redis.disconnect();
    }
  });
}

/** Whether PostgreSQL answers at DATABASE_URL (throws instead when CI=true). */
export function postgresAvailable(): Promise<boolean> {
  return probe('PostgreSQL', DATABASE_URL, async () => {
    const client = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 2000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('SELECT 1');
    } finally {
      await client.end().catch(() => undefined);
    }
  });
}

/** Whether a NATS server with JetStream answers at NATS_URL (throws instead when CI=true). */
export function natsAvailable(): Promise<boolean> {
  return probe('NATS JetStream', NATS_URL, async () => {
    const { connect } = await import('@nats-io/transport-node');
    const { jetstreamManager } = await import('@nats-io/jetstream');
    const nc = await connect({ servers: NATS_URL, timeout: 2000, reconnect: false });
    try {
      await jetstreamManager(nc);
    } finally {
      await nc.close();
    }
  });
}

/** A Redis client and a key prefix of its own; `cleanup()` deletes that prefix's keys only. */
export function redisForTest(url = REDIS_URL) {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  const prefix = `jobhook-test:${runTag()}:`;
  return {
    redis,
    prefix,
    async cleanup() {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) await redis.del(...keys);
      } while (cursor !== '0');
      redis.disconnect();
    },
  };
}

/** A pg Pool and a schema of its own; `cleanup()` drops that schema only, then ends the pool. */
export async function postgresForTest(url = DATABASE_URL) {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  pool.on('error', () => undefined);
  const schema = `jobhook_${runTag()}`;
  await pool.query(`CREATE SCHEMA "${schema}"`);
  return {
    pool,
    schema,
    async cleanup() {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}

/** A port nobody listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Options of {@link startPrivateRedis}. */
export interface PrivateRedisOptions {
  /**
   * Keep an append-only file, fsynced on every write (`appendfsync always`), in a scratch folder:
   * what a queue that must survive a crash of Redis needs. Default: no persistence at all.
   */
  durable?: boolean;
}

/** A redis-server of this test's own on a free port, for tests that stop it. */
export interface PrivateRedis {
  readonly url: string;
  readonly port: number;
  /** SIGKILL: the server dies at once; without `durable`, its data with it. */
  kill(): Promise<void>;
  /** Starts it again on the same port (after `kill`), reloading its append-only file if durable. */
  start(): Promise<void>;
  /** Kills it for good and removes its scratch folder. */
  stop(): Promise<void>;
}

export async function startPrivateRedis(options: PrivateRedisOptions = {}): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = options.durable ? await mkdtemp(join(tmpdir(), 'jobhook-redis-')) : undefined;
  const persistence = dir
    ? ['--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always']
    : ['--save', '', '--appendonly', 'no'];
  let child: ChildProcess | undefined;

  async function start() {
    const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', ...persistence], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = server;
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const onData = (data: Buffer) => {
        output += data.toString();
        if (/Ready to accept connections/.test(output)) {
          server.stdout.off('data', onData);
          server.stdout.resume();
          resolve();
        }
      };
      server.stdout.on('data', onData);
      server.stderr.resume();
      server.once('error', reject);
      server.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${output}`)));
    });
  }

  async function kill() {
    const server = child;
    if (!server || server.exitCode !== null || server.signalCode !== null) return;
    const exited = once(server, 'exit');
    server.kill('SIGKILL');
    await exited;
  }

  async function stop() {
    await kill();
    if (dir) await rm(dir, { recursive: true, force: true });
  }

  await start();
  return { url: `redis://127.0.0.1:${port}`, port, kill, start, stop };
}

/** A nats-server with JetStream of this test's own on a free port, for tests that restart it. */
export interface PrivateNats {
  readonly url: string;
  /** SIGKILL: the server dies at once; its streams stay on disk. */
  kill(): Promise<void>;
  /** SIGTERM: the server shuts down cleanly, writing its streams' and consumers' state first. */
  shutdown(): Promise<void>;
  /** Starts it again on the same port and store (after `kill`). */
  start(): Promise<void>;
  /** Kills it for good and removes its store. */
  stop(): Promise<void>;
}

export async function startPrivateNats(): Promise<PrivateNats> {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'jobhook-nats-'));
  let child: ChildProcess | undefined;

  async function start() {
    const server = spawn('nats-server', ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = server;
    let output = '';
    await new Promise<void>((resolve, reject) => {
      // nats-server logs to stderr.
      const onData = (data: Buffer) => {
        output += data.toString();
        if (/Server is ready/.test(output)) {
          server.stderr.off('data', onData);
          server.stderr.resume();
          resolve();
        }
      };
      server.stderr.on('data', onData);
      server.stdout.resume();
      server.once('error', reject);
      server.once('exit', (code) => reject(new Error(`nats-server exited (${code}): ${output}`)));
    });
  }

  async function end(signal: 'SIGKILL' | 'SIGTERM') {
    const server = child;
    if (!server || server.exitCode !== null || server.signalCode !== null) return;
    const exited = once(server, 'exit');
    server.kill(signal);
    await exited;
  }
  const kill = () => end('SIGKILL');

  await start();
  return {
    url: `nats://127.0.0.1:${port}`,
    kill,
    shutdown: () => end('SIGTERM'),
    start,
    async stop() {
      await kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
