// What differs between runs of the many-instances test: where the instances dedupe and where
// their side effects are counted. A variant prepares a run of its own (a key prefix, a schema),
// gives the instances their environment, reads the effects back and removes what it created.
// A hand-off variant (BullMQ) plugs in here too: its `processes` adds the workers, its env tells
// instance.ts to hand events off instead of running handlers.
import { redisForTest, postgresForTest, REDIS_URL, DATABASE_URL } from '../support/services.js';

export interface PreparedVariant {
  /** Environment of every receiver process (besides PORT, SECRETS, LEASE_MS). */
  env: Record<string, string>;
  /** For each event id, the pids of the processes that performed its side effect, in order. */
  effects(): Promise<Map<string, string[]>>;
  cleanup(): Promise<void>;
}

export interface Variant {
  name: string;
  prepare(): Promise<PreparedVariant>;
}

export const redisVariant: Variant = {
  name: 'redis',
  async prepare() {
    const service = redisForTest();
    return {
      env: { VARIANT: 'redis', REDIS_URL, PREFIX: service.prefix },
      async effects() {
        const effects = new Map<string, string[]>();
        const keys: string[] = [];
        let cursor = '0';
        do {
          const [next, found] = await service.redis.scan(
            cursor,
            'MATCH',
            `${service.prefix}effects:*`,
            'COUNT',
            1000,
          );
          cursor = next;
          keys.push(...found);
        } while (cursor !== '0');
        const pipeline = service.redis.pipeline();
        for (const key of keys) pipeline.lrange(key, 0, -1);
        const lists = (await pipeline.exec()) ?? [];
        keys.forEach((key, i) => {
          effects.set(key.slice(`${service.prefix}effects:`.length), lists[i]![1] as string[]);
        });
        return effects;
      },
      cleanup: () => service.cleanup(),
    };
  },
};

export const postgresVariant: Variant = {
  name: 'postgres',
  async prepare() {
    const service = await postgresForTest();
    await service.pool.query(
      `CREATE TABLE "${service.schema}".effects (n bigserial PRIMARY KEY, event_id text NOT NULL, pid text NOT NULL)`,
    );
    return {
      env: { VARIANT: 'postgres', DATABASE_URL, SCHEMA: service.schema },
      async effects() {
        const { rows } = await service.pool.query<{ event_id: string; pids: string[] }>(
          `SELECT event_id, array_agg(pid ORDER BY n) AS pids FROM "${service.schema}".effects GROUP BY event_id`,
        );
        return new Map(rows.map((row) => [row.event_id, row.pids]));
      },
      cleanup: () => service.cleanup(),
    };
  },
};
