// examples/many-instances: two instances of the example share one store (Redis, then Postgres);
// the same delivery sent to both runs the handler once. With the hand-off, both queue it and the
// example's worker runs the handler once.
import { signDelivery } from 'jobhook/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { start, type ManyInstancesOptions } from '../../examples/many-instances/server.js';
import { startWorker } from '../../examples/many-instances/worker.js';
import { completed, SECRET } from '../adapters/fixtures.js';
import {
  DATABASE_URL,
  postgresAvailable,
  postgresForTest,
  REDIS_URL,
  redisAvailable,
  redisForTest,
} from '../support/services.js';

const available = { redis: await redisAvailable(), postgres: await postgresAvailable() };
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function stores(kind: 'redis' | 'postgres'): Promise<ManyInstancesOptions['store']> {
  if (kind === 'redis') {
    const service = redisForTest();
    cleanups.push(() => service.cleanup());
    return { redisUrl: REDIS_URL, prefix: service.prefix };
  }
  const service = await postgresForTest();
  cleanups.push(() => service.cleanup());
  return { databaseUrl: DATABASE_URL, table: `${service.schema}.deliveries` };
}

describe.each(['redis', 'postgres'] as const)('examples/many-instances on %s', (kind) => {
  it.runIf(available[kind])('runs the handler once for a delivery sent to both instances', async () => {
    const store = await stores(kind);
    const lines: string[] = [];
    const log = (line: string) => lines.push(line);
    const a = await start({ port: 0, secret: SECRET, store, log });
    cleanups.push(() => a.close());
    const b = await start({ port: 0, secret: SECRET, store, log });
    cleanups.push(() => b.close());

    const payload = completed();
    const delivery = signDelivery({ secret: SECRET, payload });
    const send = (url: string) =>
      fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body as BodyInit });
    const statuses = (await Promise.all([send(a.url), send(b.url)])).map((r) => r.status).sort();
    // Both at once: one runs it (200), the other finds it done (200) or still running (409).
    expect([
      [200, 200],
      [200, 409],
    ]).toContainEqual(statuses);
    // Again, one after the other: done on both.
    expect((await send(a.url)).status).toBe(200);
    expect((await send(b.url)).status).toBe(200);
    expect(lines).toEqual([`job ${payload.data.task_id} completed: ${payload.data.image_url}`]);
  });
});

describe('examples/many-instances handing off to BullMQ', () => {
  it.runIf(available.redis)(
    'queues a delivery sent to both instances once; the worker runs it once',
    async () => {
      const service = redisForTest();
      cleanups.push(() => service.cleanup());
      const queue = { redisUrl: REDIS_URL, prefix: service.prefix.slice(0, -1) };
      const received: string[] = [];
      const handled: string[] = [];
      const a = await start({
        port: 0,
        secret: SECRET,
        store: { queue },
        log: (line) => received.push(line),
      });
      cleanups.push(() => a.close());
      const b = await start({
        port: 0,
        secret: SECRET,
        store: { queue },
        log: (line) => received.push(line),
      });
      cleanups.push(() => b.close());

      const payload = completed();
      const delivery = signDelivery({ secret: SECRET, payload });
      const send = (url: string) =>
        fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body as BodyInit });
      // Both answer 200 once the event is queued; the second finds the first one's job.
      expect((await Promise.all([send(a.url), send(b.url)])).map((r) => r.status)).toEqual([200, 200]);

      const worker = await startWorker({ secret: SECRET, queue, log: (line) => handled.push(line) });
      cleanups.push(() => worker.close());
      const line = `job ${payload.data.task_id} completed: ${payload.data.image_url}`;
      for (let waited = 0; handled.length === 0 && waited < 15_000; waited += 20) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await new Promise((resolve) => setTimeout(resolve, 200)); // time for a second run, were there one
      expect(handled).toEqual([line]);
      expect(received).toEqual([]); // the web instances ran no handler
    },
  );
});
