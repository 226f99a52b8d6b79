// The quarantine of postgresInbox under a flood (quarantine-flood.ts: its defaults), in a schema of
// this run's own; its bytes on disk are the table's (pg_total_relation_size).
import { postgresDedupeStore, postgresInbox } from 'jobhook/postgres';
import { afterAll, beforeAll, describe } from 'vitest';
import { postgresAvailable, postgresForTest } from '../support/services.js';
import { quarantineDefaults } from './quarantine-flood.js';

const available = await postgresAvailable();

describe.runIf(available)('the PostgreSQL quarantine under a flood, with its defaults', () => {
  let service: Awaited<ReturnType<typeof postgresForTest>>;
  let made = 0;
  beforeAll(async () => {
    service = await postgresForTest();
  });
  afterAll(() => service.cleanup());

  quarantineDefaults({
    async make(options) {
      const n = ++made;
      // Reading back megabytes of forged bodies can take seconds on a busy machine: the default
      // 5 s bound on each query is not what is tested here.
      const inbox = postgresInbox({
        pool: service.pool,
        table: `${service.schema}.flood${n}`,
        timeoutMs: 60_000,
        ...options,
      });
      return {
        inbox,
        dedupe: postgresDedupeStore({ pool: service.pool, table: `${service.schema}.deliveries${n}` }),
        async diskBytes() {
          await inbox.list({ limit: 1 }); // the table made
          const { rows } = await service.pool.query(
            'SELECT pg_total_relation_size($1::regclass)::bigint AS n',
            [inbox.table],
          );
          return Number(rows[0].n);
        },
      };
    },
  });
});
