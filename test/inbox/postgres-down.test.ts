// A PostgreSQL inbox that cannot be written is answered 503 `inbox_failed` with Retry-After, never a
// 2xx, and the receiver process (receiver-process.ts) lives on; once the database is back, the
// gateway's retry is stored and the event handled once. Two ways it cannot be written, both real:
// its table locked by another session (LOCK TABLE ... ACCESS EXCLUSIVE, held until the receiver has
// answered, past its `timeoutMs`), and the server unreachable (a TCP relay of the test's own in
// front of PostgreSQL, stopped, then started again on the same port). In a schema of this run's own.
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { signDelivery } from 'jobhook/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completedPayload, SECRET } from '../fixtures.js';
import { startChild, stopChild, type Child } from '../many-instances/processes.js';
import { DATABASE_URL, freePort, postgresAvailable, postgresForTest } from '../support/services.js';

const available = await postgresAvailable();

type Delivery = ReturnType<typeof signDelivery>;

async function post(port: number, delivery: Delivery) {
  const response = await fetch(`http://127.0.0.1:${port}/webhooks`, {
    method: 'POST',
    headers: delivery.headers,
    body: delivery.body as BodyInit,
  });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

/** Sends `delivery` as a gateway retries it, until a 2xx; resolves with how many attempts it took. */
async function retryUntilOk(port: number, delivery: Delivery): Promise<number> {
  for (let attempts = 1; ; attempts++) {
    const { status } = await post(port, delivery);
    if (status >= 200 && status < 300) return attempts;
    expect(status).toBe(503);
    await sleep(20);
  }
}

function expectRefusedForNow(answer: Awaited<ReturnType<typeof post>>) {
  expect(answer.status).toBe(503);
  expect(answer.headers.get('retry-after')).toBe('5');
  expect(JSON.parse(answer.body).error.code).toBe('inbox_failed');
}

/** A TCP relay on loopback to PostgreSQL: `down()` stops it and cuts its connections, `up()` starts it again. */
async function startRelay(target: URL) {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  const up = async () => {
    server = createServer((client) => {
      const upstream = connect(Number(target.port || 5432), target.hostname);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('error', () => undefined);
        socket.once('close', () => sockets.delete(socket));
      }
      client.pipe(upstream).pipe(client);
      client.once('close', () => upstream.destroy());
      upstream.once('close', () => client.destroy());
    });
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
  };
  const down = async () => {
    const closed = new Promise((resolve) => server!.close(resolve));
    for (const socket of sockets) socket.destroy();
    await closed;
  };
  await up();
  return { port, up, down };
}

describe.runIf(available)('a PostgreSQL inbox that cannot be written', () => {
  let service: Awaited<ReturnType<typeof postgresForTest>>;
  let dir: string;
  const children: Child[] = [];
  beforeAll(async () => {
    service = await postgresForTest();
    dir = mkdtempSync(join(tmpdir(), 'jobhook-postgres-down-'));
  });
  afterAll(async () => {
    for (const child of children) await stopChild(child, 'SIGKILL');
    // The schemas the receiver processes worked in, this run's own, then the run's schema.
    for (const name of ['locked', 'unreachable']) {
      await service.pool.query(`DROP SCHEMA IF EXISTS "${service.schema}_${name}" CASCADE`);
    }
    await service.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  async function receiverProcess(name: string, databaseUrl: string) {
    const runs = join(dir, `${name}-runs.txt`);
    writeFileSync(runs, '');
    await service.pool.query(`CREATE SCHEMA "${service.schema}_${name}"`);
    const child = await startChild('../inbox/receiver-process.ts', {
      ENGINE: 'postgres',
      DATABASE_URL: databaseUrl,
      SCHEMA: `${service.schema}_${name}`,
      SECRET,
      RUNS_FILE: runs,
      LEASE_MS: '30000',
      // Short, so that the test does not wait 5 s per attempt; the test waits on answers, never on time.
      TIMEOUT_MS: '300',
    });
    children.push(child);
    const port = Number(child.readyLine.split(' ')[1]);
    const table = `"${service.schema}_${name}".inbox`;
    // One delivery first, run to its end: the table exists, and the pool is connected.
    const warm = completedPayload({ id: `evt_${randomUUID()}` });
    expect(await post(port, signDelivery({ secret: SECRET, payload: warm }))).toMatchObject({ status: 200 });
    const runsOf = (id: string) =>
      readFileSync(runs, 'utf8')
        .split('\n')
        .filter((line) => line.startsWith(`${id} `));
    while (runsOf(warm.id).length === 0) await sleep(10);
    return { child, port, table, runsOf };
  }

  /** Resolves once the table holds `rows` rows of the delivery (at least one, if not given), all handled. */
  async function settled(table: string, deliveryId: string, rows?: number) {
    for (;;) {
      const { rows: found } = await service.pool.query(
        `SELECT count(*)::int AS n, count(*) FILTER (WHERE status <> 'handled')::int AS open
           FROM ${table} WHERE delivery_id = $1`,
        [deliveryId],
      );
      const { n, open } = found[0] as { n: number; open: number };
      if (n === (rows ?? Math.max(n, 1)) && open === 0) return;
      await sleep(20);
    }
  }

  it('its table locked past the time-out: 503, the process lives, the retry after the lock runs once', async () => {
    const { child, port, table, runsOf } = await receiverProcess('locked', DATABASE_URL);
    const locker = new pg.Client({ connectionString: DATABASE_URL });
    locker.on('error', () => undefined);
    await locker.connect();
    const payload = completedPayload({ id: `evt_${randomUUID()}` });
    const delivery = signDelivery({ secret: SECRET, payload });
    let attempts = 0;
    try {
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
      for (; attempts < 2; attempts++) expectRefusedForNow(await post(port, delivery));
      expect(child.process.exitCode).toBeNull();
      expect(child.process.signalCode).toBeNull();
    } finally {
      await locker.query('COMMIT');
      await locker.end();
    }
    attempts += await retryUntilOk(port, delivery);

    // Each attempt's insert, the two answered 503 included (they waited on the lock past the
    // time-out, then went through), is a row: every one settles, and the event runs once.
    await settled(table, delivery.id, attempts);
    expect(runsOf(payload.id)).toEqual([`${payload.id} ${child.process.pid}`]);
  });

  it('the server unreachable: 503, the process lives, the retry once it is back runs once', async () => {
    const relay = await startRelay(new URL(DATABASE_URL));
    const url = new URL(DATABASE_URL);
    url.hostname = '127.0.0.1';
    url.port = String(relay.port);
    const { child, port, table, runsOf } = await receiverProcess('unreachable', url.href);
    const payload = completedPayload({ id: `evt_${randomUUID()}` });
    const delivery = signDelivery({ secret: SECRET, payload });
    await relay.down();
    try {
      for (let n = 0; n < 3; n++) expectRefusedForNow(await post(port, delivery));
      expect(child.process.exitCode).toBeNull();
      expect(child.process.signalCode).toBeNull();
      expect(child.stderr()).toMatch(/inbox failed/);
      const { rows } = await service.pool.query(
        `SELECT count(*)::int AS n FROM ${table} WHERE delivery_id = $1`,
        [delivery.id],
      );
      expect(rows[0].n).toBe(0);
    } finally {
      await relay.up();
    }
    await retryUntilOk(port, delivery);
    await settled(table, delivery.id);
    expect(runsOf(payload.id)).toEqual([`${payload.id} ${child.process.pid}`]);
  });
});
