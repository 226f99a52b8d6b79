// What each engine entry exports at run time: its hand-off, the deprecated worker and (BullMQ,
// pg-boss) its job id, which docs/scaling.md has users write; no internals users never write (the
// retry defaults, which docs/handoff.md states, the NATS failed record's header, ...). A new export
// is a decision: add it here, in the same form on every engine.
import { expect, it } from 'vitest';

const ENTRIES = {
  'jobhook/bullmq': ['bullmqHandoff', 'jobIdOf', 'runWorker'],
  'jobhook/pg-boss': ['jobIdOf', 'pgBossHandoff', 'runPgBossWorker'],
  'jobhook/nats': ['natsHandoff', 'runNatsWorker'],
};

it.each(Object.entries(ENTRIES))(
  '%s exports its hand-off, the deprecated worker and no internals',
  async (entry, names) => {
    const loaded = (await import(entry)) as Record<string, unknown>;
    expect(Object.keys(loaded).sort()).toEqual(names);
  },
);
