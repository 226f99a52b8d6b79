// A receiver with postgresInbox (and postgresDedupeStore beside it), in a schema of this run's own.
import { postgresDedupeStore, postgresInbox, type PostgresInbox } from 'jobhook/postgres';
import { afterAll, beforeAll, describe } from 'vitest';
import { postgresAvailable, postgresForTest } from '../support/services.js';
import { receiverWithInbox } from './receiver-suite.js';

const available = await postgresAvailable();

describe.runIf(available)('postgresInbox in a receiver', () => {
  let service: Awaited<ReturnType<typeof postgresForTest>>;
  let made = 0;
  beforeAll(async () => {
    service = await postgresForTest();
  });
  afterAll(() => service.cleanup());

  receiverWithInbox({
    async make(options) {
      const n = ++made;
      return {
        inbox: postgresInbox({ pool: service.pool, table: `${service.schema}.inbox${n}`, ...options }),
        dedupe: postgresDedupeStore({ pool: service.pool, table: `${service.schema}.deliveries${n}` }),
      };
    },
    async tamper(inbox, id) {
      const table = (inbox as PostgresInbox).table;
      await service.pool.query(
        `UPDATE ${table} SET body = set_byte(body, 10, (get_byte(body, 10) + 1) % 256) WHERE id = $1`,
        [id],
      );
    },
  });
});
