// examples/pg-boss-handoff and examples/nats-handoff: the web process answers once the event is
// queued, the same delivery sent twice is queued once, and the example's worker runs it once.
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import pg from 'pg';
import { signDelivery } from 'jobhook/testing';
import { afterEach, describe, expect, it } from 'vitest';
import * as natsApp from '../../examples/nats-handoff/app.js';
import * as pgBossApp from '../../examples/pg-boss-handoff/app.js';
import { completed, SECRET } from '../adapters/fixtures.js';
import { until } from '../handoff/contract.js';
import { DATABASE_URL, NATS_URL, natsAvailable, postgresAvailable, runTag } from '../support/services.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const available = { postgres: await postgresAvailable(), nats: await natsAvailable() };

interface Closable {
  close(): Promise<void>;
}

/** Starts the example's web process and a worker; the same delivery three times runs once. */
async function runsOnce<O extends { secret: string }>(
  startServer: (options: O & { port: number }) => Promise<Closable & { url: string }>,
  startWorker: (options: O & { log: (line: string) => void }) => Promise<Closable>,
  options: O,
) {
  const lines: string[] = [];
  const server = await startServer({ ...options, port: 0 });
  cleanups.push(() => server.close());
  const payload = completed();
  const delivery = signDelivery({ secret: SECRET, payload });
  const send = () =>
    fetch(server.url, { method: 'POST', headers: delivery.headers, body: delivery.body as BodyInit });
  expect((await send()).status).toBe(200);
  expect((await send()).status).toBe(200);

  const worker = await startWorker({ ...options, log: (line) => lines.push(line) });
  cleanups.push(() => worker.close());
  await until(() => lines.length === 1, 'the worker to run the event');
  expect((await send()).status).toBe(200);
  await new Promise((resolve) => setTimeout(resolve, 700)); // room for a second run, were there one
  expect(lines).toEqual([`job ${payload.data.task_id} completed: ${payload.data.image_url}`]);
}

describe('examples/pg-boss-handoff', () => {
  it.runIf(available.postgres)('answers once the event is queued; the worker runs it once', async () => {
    const schema = `jobhook_example_${runTag()}`;
    cleanups.push(async () => {
      const client = new pg.Client({ connectionString: DATABASE_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    });
    await runsOnce(pgBossApp.startServer, pgBossApp.startWorker, {
      databaseUrl: DATABASE_URL,
      schema,
      secret: SECRET,
    });
  });
});

describe('examples/nats-handoff', () => {
  it.runIf(available.nats)('answers once the event is queued; the worker runs it once', async () => {
    const tag = runTag();
    const stream = `JOBHOOK_EXAMPLE_${tag}`;
    cleanups.push(async () => {
      const nc = await connect({ servers: NATS_URL });
      const jsm = await jetstreamManager(nc);
      await jsm.streams.delete(stream).catch(() => undefined);
      await jsm.streams.delete(`${stream}_DONE`).catch(() => undefined); // the worker's done keys
      await nc.close();
    });
    await runsOnce(natsApp.startServer, natsApp.startWorker, {
      natsUrl: NATS_URL,
      stream,
      subject: `jobhook.${tag}.events`,
      secret: SECRET,
    });
  });
});
