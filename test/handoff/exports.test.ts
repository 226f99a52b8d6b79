// What each engine entry exports at run time: its hand-off, the deprecated worker, its retry
// defaults and (BullMQ, pg-boss) its job id; no internals users never write (the NATS failed
// record's header, ...). A new export is a decision: add it here, in the same form on every engine.
import { expect, it } from 'vitest';

const ENTRIES = {
  'jobhook/bullmq': ['DEFAULT_JOB_OPTIONS', 'bullmqHandoff', 'jobIdOf', 'runWorker'],
  'jobhook/pg-boss': ['DEFAULT_SEND_OPTIONS', 'jobIdOf', 'pgBossHandoff', 'runPgBossWorker'],
  'jobhook/nats': ['DEFAULT_BACKOFF_MS', 'natsHandoff', 'runNatsWorker'],
};

it.each(Object.entries(ENTRIES))(
  '%s exports its hand-off, the deprecated worker and no internals',
  async (entry, names) => {
    const loaded = (await import(entry)) as Record<string, unknown>;
    expect(Object.keys(loaded).sort()).toEqual(names);
  },
);
