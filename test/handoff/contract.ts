// The hand-off contract, one suite run against every engine (BullMQ, pg-boss, NATS JetStream): a
// broker that does not answer gives 503 handoff_failed and leaves nothing that stops the sender's
// retry; an event delivered twice is one message; a job whose worker is SIGKILLed mid-job runs
// again and its handlers complete once; a handler that always throws leaves, after its attempts,
// the event kept as failed with its error, listed and retried the same way everywhere.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver, type Receiver } from 'jobhook';
import type { FailedEvents, Handoff } from 'jobhook/extend';
import { signDelivery } from 'jobhook/testing';
import { completed, SECRET } from '../adapters/fixtures.js';
import { startChild, stopChild } from '../many-instances/processes.js';

/** One engine, as the suite drives it. */
export interface EngineUnderTest {
  readonly name: string;
  /** Whether its broker runs here (a missing one skips the suite, or fails it with CI=true). */
  available(): Promise<boolean>;
  /** A queue (stream, schema) of this run's own; `cleanup` removes it. */
  open(options: { attempts: number }): Promise<OpenEngine>;
}

export interface OpenEngine {
  readonly handoff: Handoff & FailedEvents;
  /** A hand-off of this engine whose broker does not answer, with a short time-out. */
  unreachable(): Promise<Handoff>;
  /** Messages stored for this queue, in any state. */
  stored(): Promise<number>;
  /** Messages not yet finished (waiting, running, waiting for a retry). */
  pending(): Promise<number>;
  /** Runs the receiver's handlers for this queue in this process; a dead worker's job comes back within seconds. */
  startWorker(receiver: Receiver): Promise<{ close(): Promise<void> }>;
  /** What test/handoff/worker-process.ts needs to run a worker on this queue. */
  readonly workerEnv: Record<string, string>;
  /** What `jobhook failed` needs to find this queue. */
  readonly cliArgs: string[];
  cleanup(): Promise<void>;
}

const deliver = (receiver: Receiver, payload: object, id?: string) => {
  const delivery = signDelivery({ secret: SECRET, payload, ...(id !== undefined && { id }) });
  return receiver.receive({ headers: delivery.headers, body: delivery.body });
};

/**
 * The bound on each test of the contract, against a hang: a busy machine takes many times longer to
 * start a worker process (tsx) and for a broker to take back a dead worker's job than an idle one.
 */
const HANG_MS = 180_000;

/** Waits until `check` holds, polling (a bound against a hang, not a speed check). */
export async function until(check: () => Promise<boolean> | boolean, what: string, ms = 120_000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** `available`: `await engine.available()`, taken at the test file's top level. */
export function handoffContract(engine: EngineUnderTest, available: boolean): void {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function open(attempts = 3) {
    const opened = await engine.open({ attempts });
    cleanups.push(() => opened.cleanup());
    return opened;
  }

  async function worker(opened: OpenEngine, receiver: Receiver) {
    const handle = await opened.startWorker(receiver);
    cleanups.push(() => handle.close());
    return handle;
  }

  describe.runIf(available)(`hand-off contract: ${engine.name}`, { timeout: HANG_MS }, () => {
    it('answers 503 handoff_failed when the broker does not answer; the retry is stored once and runs', async () => {
      const opened = await open();
      const errors: string[] = [];
      const down = createReceiver({
        secret: SECRET,
        handoff: await opened.unreachable(),
        logger: { error: (line) => errors.push(line), warn: () => undefined },
      });
      const payload = completed();
      const answer = await deliver(down, payload, 'msg_down');
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.body)).toMatchObject({ ok: false, error: { code: 'handoff_failed' } });
      expect(errors.join('\n')).toMatch(/could not be queued/);

      // The sender retries once the broker is back: nothing of the failed try is in the way.
      const up = createReceiver({ secret: SECRET, handoff: opened.handoff });
      expect((await deliver(up, payload, 'msg_down')).status).toBe(200);
      expect(await opened.stored()).toBe(1);
      const ran: string[] = [];
      await worker(
        opened,
        createReceiver({ secret: SECRET }).onJobCompleted((event) => void ran.push(event.id)),
      );
      await until(async () => ran.length === 1 && (await opened.pending()) === 0, 'the event to run');
      expect(ran).toEqual([payload.id]);
    });

    it('stores an event delivered twice (and through a second webhook) as one message; it runs once', async () => {
      const opened = await open();
      const receiver = createReceiver({ secret: SECRET, handoff: opened.handoff });
      const payload = completed();
      const answers = await Promise.all([
        deliver(receiver, payload, 'msg_a'),
        deliver(receiver, payload, 'msg_a'),
        deliver(receiver, payload, 'msg_b'),
      ]);
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
      expect(await opened.stored()).toBe(1);

      let runs = 0;
      await worker(
        opened,
        createReceiver({ secret: SECRET }).onJobCompleted(() => void runs++),
      );
      await until(async () => runs === 1 && (await opened.pending()) === 0, 'the event to run');
      // Delivered again after it ran: still one message, no second run.
      expect((await deliver(receiver, payload, 'msg_c')).status).toBe(200);
      expect(await opened.stored()).toBe(1);
      expect(await opened.pending()).toBe(0);
      expect(runs).toBe(1);
    });

    it('runs a job again when its worker is SIGKILLed mid-job, as its next attempt; its handlers complete once', async () => {
      const opened = await open();
      const receiver = createReceiver({ secret: SECRET, handoff: opened.handoff });
      const payload = completed();
      const child = await startChild('../handoff/worker-process.ts', opened.workerEnv);
      const killed = (async () => {
        try {
          const started = await new Promise<string>((resolve) => {
            let output = '';
            child.process.stdout!.on('data', (data: Buffer) => {
              output += data.toString();
              const line = /^started (.+)$/m.exec(output);
              if (line) resolve(line[1]!);
            });
          });
          await stopChild(child, 'SIGKILL');
          return started;
        } finally {
          await stopChild(child, 'SIGKILL');
        }
      })();
      expect((await deliver(receiver, payload)).status).toBe(200);
      expect(await killed).toBe(`${payload.id} attempt 1`);

      const completions: string[] = [];
      const attempts: (number | undefined)[] = [];
      await worker(
        opened,
        createReceiver({ secret: SECRET }).onJobCompleted((event, context) => {
          completions.push(event.id);
          attempts.push(context.attempt);
        }),
      );
      await until(
        async () => completions.length === 1 && (await opened.pending()) === 0,
        'the job to run again',
      );
      expect(completions).toEqual([payload.id]);
      // The killed run was an attempt: the run after it is the second (or later, had a busy
      // machine let this worker's lock lapse too), not a first one again.
      expect(attempts[0]).toBeGreaterThanOrEqual(2);
      expect(await opened.handoff.listFailed()).toEqual([]);
    });

    it('keeps an event whose handler always throws as failed, with its error, after its attempts', async () => {
      const opened = await open(2);
      const receiver = createReceiver({ secret: SECRET, handoff: opened.handoff });
      const payload = completed();
      expect((await deliver(receiver, payload, 'msg_failing')).status).toBe(200);
      const attempts: (number | undefined)[] = [];
      await worker(
        opened,
        createReceiver({ secret: SECRET })
          .onJobCompleted((_event, context) => {
            attempts.push(context.attempt);
            throw new Error('the database is down');
          })
          .onError(() => undefined),
      );
      await until(async () => (await opened.handoff.listFailed()).length === 1, 'the event to fail for good');
      const [failed] = await opened.handoff.listFailed();
      expect(failed).toMatchObject({
        key: payload.id,
        type: 'job.completed',
        deliveryId: 'msg_failing',
        payload,
        attempts: 2,
      });
      expect(failed!.error).toMatch(/the database is down/);
      expect(attempts).toEqual([1, 2]);
      // The sender's later retry finds the event: no second message.
      expect((await deliver(receiver, payload, 'msg_failing')).status).toBe(200);
      expect(await opened.pending()).toBe(0);
    });

    it('retries a failed event by hand: one more attempt each time, context.attempt counting on; retrying it again runs nothing', async () => {
      const opened = await open(2);
      const receiver = createReceiver({ secret: SECRET, handoff: opened.handoff });
      const payload = completed();
      expect((await deliver(receiver, payload, 'msg_retry')).status).toBe(200);
      let broken = true;
      const attempts: (number | undefined)[] = [];
      const handled: string[] = [];
      await worker(
        opened,
        createReceiver({ secret: SECRET })
          .onJobCompleted((event, context) => {
            attempts.push(context.attempt);
            if (broken) throw new Error('the database is down');
            handled.push(event.id);
          })
          .onError(() => undefined),
      );
      await until(async () => (await opened.handoff.listFailed()).length === 1, 'the event to fail for good');
      const [failed] = await opened.handoff.listFailed();

      // Retried while still broken: one more attempt, then failed again, attempts counting on.
      expect(await opened.handoff.retryFailed(failed!.id)).toBe(true);
      await until(
        async () => (await opened.handoff.listFailed())[0]?.attempts === 3,
        'the retry to fail again',
      );
      expect(attempts).toEqual([1, 2, 3]);
      const [again] = await opened.handoff.listFailed();

      broken = false;
      expect(await opened.handoff.retryFailed(again!.id)).toBe(true);
      await until(
        async () => handled.length === 1 && (await opened.pending()) === 0,
        'the retried event to run',
      );
      expect(handled).toEqual([payload.id]);
      expect(attempts).toEqual([1, 2, 3, 4]);
      expect(await opened.handoff.listFailed()).toEqual([]);

      // Retried again (a second operator, `failed retry --all` run twice): it succeeded meanwhile.
      expect(await opened.handoff.retryFailed(again!.id)).toBe(false);
      expect(await opened.handoff.retryFailed('no-such-event')).toBe(false);
      expect(await opened.pending()).toBe(0);
      expect(handled).toHaveLength(1);
    });
  });
}
