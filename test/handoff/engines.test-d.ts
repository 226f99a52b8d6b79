// jobhook/bullmq, jobhook/pg-boss and jobhook/nats export the same names in the same form:
// `<engine>Handoff(options: <Engine>HandoffOptions): <Engine>Handoff`, a hand-off with
// listFailed, retryFailed and work(receiver, WorkOptions): Promise<WorkerHandle>, each engine's
// WorkOptions and WorkerHandle of the contract's form, and the deprecated run*Worker beside them.
import { expectTypeOf, test } from 'vitest';
import type { FailedEvents, Handoff, QueuedJobRunner, WorkerHandle, WorkOptions } from 'jobhook/extend';
import type * as Bullmq from 'jobhook/bullmq';
import type * as Nats from 'jobhook/nats';
import type * as PgBoss from 'jobhook/pg-boss';

test('each engine’s WorkOptions and WorkerHandle are the contract’s, with the engine’s own additions', () => {
  expectTypeOf<Bullmq.WorkOptions>().toExtend<WorkOptions>();
  expectTypeOf<PgBoss.WorkOptions>().toExtend<WorkOptions>();
  expectTypeOf<Nats.WorkOptions>().toExtend<WorkOptions>();
  expectTypeOf<Bullmq.WorkerHandle>().toExtend<WorkerHandle>();
  expectTypeOf<PgBoss.WorkerHandle>().toEqualTypeOf<WorkerHandle>();
  expectTypeOf<Nats.WorkerHandle>().toEqualTypeOf<WorkerHandle>();
});

test('each hand-off is made from its options and has listFailed, retryFailed and work', () => {
  expectTypeOf<typeof Bullmq.bullmqHandoff>().toEqualTypeOf<
    (options: Bullmq.BullmqHandoffOptions) => Bullmq.BullmqHandoff
  >();
  expectTypeOf<typeof PgBoss.pgBossHandoff>().toEqualTypeOf<
    (options: PgBoss.PgBossHandoffOptions) => PgBoss.PgBossHandoff
  >();
  expectTypeOf<typeof Nats.natsHandoff>().toEqualTypeOf<
    (options: Nats.NatsHandoffOptions) => Nats.NatsHandoff
  >();
  expectTypeOf<Bullmq.BullmqHandoff>().toExtend<Handoff & FailedEvents>();
  expectTypeOf<PgBoss.PgBossHandoff>().toExtend<Handoff & FailedEvents>();
  expectTypeOf<Nats.NatsHandoff>().toExtend<Handoff & FailedEvents>();
  expectTypeOf<Bullmq.BullmqHandoff['work']>().toEqualTypeOf<
    (receiver: QueuedJobRunner, options?: Bullmq.WorkOptions) => Promise<Bullmq.WorkerHandle>
  >();
  expectTypeOf<PgBoss.PgBossHandoff['work']>().toEqualTypeOf<
    (receiver: QueuedJobRunner, options?: PgBoss.WorkOptions) => Promise<PgBoss.WorkerHandle>
  >();
  expectTypeOf<Nats.NatsHandoff['work']>().toEqualTypeOf<
    (receiver: QueuedJobRunner, options?: Nats.WorkOptions) => Promise<Nats.WorkerHandle>
  >();
});

test('the deprecated workers stay, resolving to the same WorkerHandle', () => {
  expectTypeOf<typeof Bullmq.runWorker>().returns.resolves.toEqualTypeOf<Bullmq.WorkerHandle>();
  expectTypeOf<typeof PgBoss.runPgBossWorker>().returns.resolves.toEqualTypeOf<PgBoss.WorkerHandle>();
  expectTypeOf<typeof Nats.runNatsWorker>().returns.resolves.toEqualTypeOf<Nats.WorkerHandle>();
});
