// jobhook/redis against a real Redis: the shared contract, then what is Redis's own (scripts
// lost on a restart, a server that dies mid-run, options).
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { redisDedupeStore } from 'jobhook/redis';
import { JobhookError } from 'jobhook';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeContract } from '../stores/store-contract.js';
import { redisAvailable, redisForTest, startPrivateRedis, type PrivateRedis } from '../support/services.js';

const available = await redisAvailable();

describe.runIf(available)('redisDedupeStore', () => {
  let service: ReturnType<typeof redisForTest>;
  beforeAll(() => {
    service = redisForTest();
  });
  afterAll(() => service.cleanup());

  storeContract({
    make: (times) => redisDedupeStore({ redis: service.redis, prefix: service.prefix, ...times }),
  });

  it('keeps one key per event under its prefix: the owner while claimed, then "done" with the retention', async () => {
    const store = redisDedupeStore({ redis: service.redis, prefix: service.prefix, leaseMs: 5000 });
    const key = `evt_${randomUUID()}`;
    await store.claim(key, 'owner-1');
    expect(await service.redis.get(service.prefix + key)).toBe('o:owner-1');
    expect(await service.redis.pttl(service.prefix + key)).toBeGreaterThan(4000);
    await store.complete(key, 'owner-1');
    expect(await service.redis.get(service.prefix + key)).toBe('done');
    const ttl = await service.redis.pttl(service.prefix + key);
    expect(ttl).toBeGreaterThan(71 * 60 * 60 * 1000); // the 72 h default
  });

  it('refuses a client that is not one, naming what to pass', () => {
    expect(() => redisDedupeStore({ redis: undefined as never })).toThrow(JobhookError);
    expect(() => redisDedupeStore({ redis: service.redis, leaseMs: 0 })).toThrow(/leaseMs/);
  });
});

describe.runIf(available)('redisDedupeStore when its Redis restarts or dies', () => {
  let server: PrivateRedis;
  let redis: Redis;
  beforeAll(async () => {
    server = await startPrivateRedis();
    // Commands wait in ioredis's offline queue while it reconnects; the store's timeout bounds that.
    redis = new Redis(server.url, { maxRetriesPerRequest: null, retryStrategy: () => 50 });
    redis.on('error', () => undefined);
  });
  afterAll(async () => {
    redis.disconnect();
    await server.stop();
  });

  it('reloads its scripts after a restart emptied the script cache (EVALSHA falls back to EVAL)', async () => {
    const store = redisDedupeStore({ redis, leaseMs: 5000 });
    const key = `evt_${randomUUID()}`;
    expect(await store.claim(key, 'a')).toBe('new');
    await server.kill();
    await server.start();
    expect(await redis.script('EXISTS', '0'.repeat(40))).toEqual([0]);
    // The restart lost the claim too (no persistence): the event is claimable again.
    expect(await store.claim(key, 'b')).toBe('new');
    expect(await store.claim(key, 'c')).toBe('busy');
  });

  it('rejects, within its timeout, while Redis is down; works again once it is back', async () => {
    const store = redisDedupeStore({ redis, timeoutMs: 500 });
    const key = `evt_${randomUUID()}`;
    await server.kill();
    const started = Date.now();
    const failure = await Promise.resolve(store.claim(key, 'a')).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(JobhookError);
    expect((failure as JobhookError).code).toBe('dedupe_store_failed');
    expect(Date.now() - started).toBeLessThan(5000); // a bound against a hang, not a speed check
    await expect(Promise.resolve(store.complete(key, 'a'))).rejects.toThrow(JobhookError);
    await server.start();
    await redis.ping();
    // The calls that timed out still waited in ioredis's offline queue and ran once Redis was back
    // (the claim, then the complete). The contract tolerates that: a late claim expires with its
    // lease, a late complete only follows handlers that succeeded.
    expect(await store.claim(key, 'b')).toBe('done');
    expect(await store.claim(`evt_${randomUUID()}`, 'a')).toBe('new');
  });

  it('rejects at once when the client gives up itself (no offline queue)', async () => {
    const strict = new Redis(server.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      lazyConnect: true,
    });
    strict.on('error', () => undefined);
    await strict.connect();
    const store = redisDedupeStore({ redis: strict, timeoutMs: 0 });
    await server.kill();
    await expect(Promise.resolve(store.claim(`evt_${randomUUID()}`, 'a'))).rejects.toThrow(JobhookError);
    strict.disconnect();
    await server.start();
  });
});
