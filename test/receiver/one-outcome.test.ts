// One job, one outcome: the first outcome handled for a task wins. A contract that reads the event
// type from a header the signature does not cover let a genuine delivery's signed bytes, re-sent
// with `x-event: failed`, run onJobFailed for a task that completed. Now a later, different
// outcome for the same task is not run: it is reported to onError and the observer as a conflict
// and answered 2xx, so that the sender stops.
import {
  createReceiver,
  memoryDedupeStore,
  type JobhookError,
  type ReceiverContract,
  type ReceiverObserver,
} from 'jobhook';
import type { ObservedDelivery } from 'jobhook/extend';
import { signDelivery } from 'jobhook/testing';
import { describe, expect, it } from 'vitest';
import { completedPayload, failedPayload, SECRET } from '../fixtures.js';

/** `payload` for the task `taskId`. */
const ofTask = (payload: { data: object }, taskId: string) => ({
  ...payload,
  data: { ...payload.data, task_id: taskId },
});

const typeInHeader: ReceiverContract = {
  version: 1,
  signature: { scheme: 'hmac-sha256', header: 'x-signature', prefix: '', encoding: 'base64' },
  payload: {
    typePath: 'header:x-event',
    typeValues: { completed: 'completed', failed: 'failed' },
    taskIdPath: 'task_id',
    imageUrlPath: 'image_url',
    errorPath: 'error',
    eventIdPath: null,
    createdAtPath: 'timestamp',
  },
};

function receiverWith(options: {
  contract?: ReceiverContract;
  dedupe?: ReturnType<typeof memoryDedupeStore>;
}) {
  const ran: string[] = [];
  const errors: JobhookError[] = [];
  const observed: ObservedDelivery[] = [];
  const observer: ReceiverObserver = {
    start: () => undefined,
    end: (_, delivery) => void observed.push(delivery),
  };
  const receiver = createReceiver({ secret: SECRET, observer, ...options })
    .onJobCompleted((event) => void ran.push(`completed ${event.data.task_id}`))
    .onJobFailed((event) => void ran.push(`failed ${event.data.task_id}`))
    .onError((error) => void errors.push(error));
  return { receiver, ran, errors, observed };
}

describe('one job, one outcome', () => {
  it('signed bytes re-sent with another type in an unsigned header: not run, a conflict, answered 2xx', async () => {
    const { receiver, ran, errors, observed } = receiverWith({ contract: typeInHeader });
    const body = {
      task_id: 'task_7',
      status: 'completed',
      image_url: 'https://img.example/7.png',
      error: null,
      timestamp: 1795255200,
    };
    const signed = signDelivery({ secret: SECRET, payload: body, scheme: typeInHeader.signature as never });
    const send = (event: string) =>
      receiver.receive({
        method: 'POST',
        headers: { ...signed.headers, 'x-event': event },
        body: signed.body,
      });
    expect((await send('completed')).status).toBe(200);
    const replayed = await send('failed');
    expect(replayed.status).toBe(200);
    expect(ran).toEqual(['completed task_7']);
    expect(errors).toEqual([
      expect.objectContaining({
        code: 'outcome_conflict',
        message: expect.stringContaining('its job.completed was handled first'),
      }),
    ]);
    expect(observed.map((delivery) => delivery.outcome)).toEqual(['ok', 'conflict']);
    // Sent again, the conflicting delivery is a duplicate: reported once.
    expect((await send('failed')).status).toBe(200);
    expect(errors).toHaveLength(1);
  });

  it('holds across a restart on a shared store; the first outcome sent again is a duplicate', async () => {
    const dedupe = memoryDedupeStore();
    const first = receiverWith({ dedupe });
    const deliver = (receiver: typeof first.receiver, payload: unknown) => {
      const signed = signDelivery({ secret: SECRET, payload });
      return receiver.receive({ headers: signed.headers, body: signed.body });
    };
    expect((await deliver(first.receiver, ofTask(completedPayload({ id: 'evt_1' }), 'task_8'))).status).toBe(
      200,
    );
    const second = receiverWith({ dedupe });
    expect((await deliver(second.receiver, ofTask(failedPayload({ id: 'evt_2' }), 'task_8'))).status).toBe(
      200,
    );
    expect((await deliver(second.receiver, ofTask(completedPayload({ id: 'evt_1' }), 'task_8'))).status).toBe(
      200,
    );
    expect([...first.ran, ...second.ran]).toEqual(['completed task_8']);
    expect(second.errors.map((error) => error.code)).toEqual(['outcome_conflict']);
    expect(second.observed.map((delivery) => delivery.outcome)).toEqual(['conflict', 'duplicate']);
  });

  it('a failed handler leaves the task open: the other outcome may still be handled', async () => {
    let fail = true;
    const receiver = createReceiver({ secret: SECRET, logger: { error: () => undefined } });
    const ran: string[] = [];
    receiver.onJobCompleted(() => {
      if (fail) throw new Error('down');
    });
    receiver.onJobFailed((event) => void ran.push(event.data.task_id));
    const deliver = (payload: unknown) => {
      const signed = signDelivery({ secret: SECRET, payload });
      return receiver.receive({ headers: signed.headers, body: signed.body });
    };
    expect((await deliver(ofTask(completedPayload({ id: 'evt_1' }), 'task_9'))).status).toBe(500);
    fail = false;
    expect((await deliver(ofTask(failedPayload({ id: 'evt_2' }), 'task_9'))).status).toBe(200);
    expect(ran).toEqual(['task_9']);
  });
});
