// createReceiver({ contract }): a sender whose signature and payload are not jobhook's defaults,
// described as `jobhook probe` reports it, reaches handlers as the usual typed events; a contract
// that cannot be used is refused at once, naming what is wrong.
import {
  createReceiver,
  JobhookError,
  type JobCompletedEvent,
  type JobFailedEvent,
  type ReceiverContract,
} from 'jobhook';
import { signDelivery } from 'jobhook/testing';
import { describe, expect, it } from 'vitest';
import { SECRET } from '../fixtures.js';

/** A sender that signs GitHub-like (base64, no prefix) and sends the simulator's `flat` shape. */
const flat: ReceiverContract = {
  version: 1,
  signature: { scheme: 'hmac-sha256', header: 'x-signature', prefix: '', encoding: 'base64' },
  payload: {
    typePath: 'event',
    typeValues: { completed: 'job.completed', failed: 'job.failed' },
    taskIdPath: 'task_id',
    imageUrlPath: 'image_url',
    errorPath: 'error',
    eventIdPath: null,
    createdAtPath: 'timestamp',
  },
};
const scheme = { scheme: 'hmac-sha256', header: 'x-signature', prefix: '', encoding: 'base64' } as const;

function receiverWith(contract: unknown, more: Record<string, unknown> = {}) {
  const events: (JobCompletedEvent | JobFailedEvent)[] = [];
  const others: unknown[] = [];
  const receiver = createReceiver({ secret: SECRET, contract: contract as ReceiverContract, ...more });
  receiver.onJobCompleted((event) => void events.push(event));
  receiver.onJobFailed((event) => void events.push(event));
  receiver.onAny((event) => {
    if (event.type !== 'job.completed' && event.type !== 'job.failed') others.push(event);
  });
  const send = async (
    payload: unknown,
    options: { scheme?: unknown; headers?: Record<string, string> } = {},
  ) => {
    const delivery = signDelivery({ secret: SECRET, payload, scheme: (options.scheme ?? scheme) as never });
    return receiver.receive({
      method: 'POST',
      headers: { ...delivery.headers, ...options.headers },
      body: delivery.body,
    });
  };
  return { receiver, events, others, send };
}

const flatCompleted = (taskId = 'task_1') => ({
  event: 'job.completed',
  task_id: taskId,
  status: 'completed',
  image_url: `https://img.example/${taskId}.png`,
  timestamp: 1795255200,
});

describe('mapping a sender payload', () => {
  it('a flat job.completed reaches onJobCompleted as the typed event, its own fields kept', async () => {
    const { send, events } = receiverWith(flat);
    const answer = await send(flatCompleted());
    expect(answer.status).toBe(200);
    expect(events).toEqual([
      {
        id: 'job.completed:task_1',
        type: 'job.completed',
        created_at: '2026-11-21T10:00:00.000Z',
        data: { task_id: 'task_1', status: 'completed', image_url: 'https://img.example/task_1.png' },
        event: 'job.completed',
        task_id: 'task_1',
        status: 'completed',
        image_url: 'https://img.example/task_1.png',
        timestamp: 1795255200,
      },
    ]);
  });

  it('a failed job reaches onJobFailed; a string error becomes { code: "unknown", message }', async () => {
    const { send, events } = receiverWith(flat);
    await send({
      event: 'job.failed',
      task_id: 'task_2',
      status: 'failed',
      error: 'out of memory',
      timestamp: 1,
    });
    expect(events[0]).toMatchObject({
      id: 'job.failed:task_2',
      type: 'job.failed',
      created_at: '1970-01-01T00:00:01.000Z',
      data: { task_id: 'task_2', status: 'failed', error: { code: 'unknown', message: 'out of memory' } },
    });
  });

  it('the derived id is stable: the same event sent again is a duplicate and runs once', async () => {
    const { send, events } = receiverWith(flat);
    expect((await send(flatCompleted('task_3'))).body).toContain('"ok":true');
    const again = await send(flatCompleted('task_3'));
    expect(again).toMatchObject({ status: 200 });
    expect(JSON.parse(again.body)).toEqual({ ok: true, duplicate: true });
    expect(events).toHaveLength(1);
  });

  it('nested paths, a type in a header, sender type values and an event id path', async () => {
    const contract: ReceiverContract = {
      signature: { scheme: 'standard-webhooks' },
      payload: {
        typePath: 'header:x-event-type',
        typeValues: { completed: 'image.succeeded', failed: 'image.errored' },
        taskIdPath: 'data.object.id',
        imageUrlPath: 'data.object.output.0.url',
        eventIdPath: 'meta.event',
      },
    };
    const { send, events } = receiverWith(contract);
    const payload = {
      meta: { event: 'evt_9' },
      data: { object: { id: 'task_9', output: [{ url: 'https://img.example/9.png' }] } },
    };
    expect(
      (await send(payload, { scheme: 'standard-webhooks', headers: { 'x-event-type': 'image.succeeded' } }))
        .status,
    ).toBe(200);
    expect(events[0]).toMatchObject({
      id: 'evt_9',
      type: 'job.completed',
      data: {
        task_id: 'task_9',
        status: 'completed',
        image_url: 'https://img.example/9.png',
        object: payload.data.object,
      },
    });
    // The error defaults to `error` beside the task id.
    const failed = {
      meta: { event: 'evt_10' },
      data: { object: { id: 'task_10', error: { code: 'nsfw', message: 'no' } } },
    };
    await send(failed, { scheme: 'standard-webhooks', headers: { 'x-event-type': 'image.errored' } });
    expect(events[1]).toMatchObject({
      type: 'job.failed',
      data: { task_id: 'task_10', error: { code: 'nsfw', message: 'no' } },
    });
  });

  it('another type value reaches onAny as it came, under that type', async () => {
    const { send, events, others } = receiverWith(flat);
    expect((await send({ event: 'job.started', task_id: 'task_4' })).status).toBe(200);
    expect(events).toEqual([]);
    expect(others).toEqual([{ event: 'job.started', task_id: 'task_4', type: 'job.started' }]);
  });

  it('a completed job without its image URL is refused 400, naming the field', async () => {
    const { send, events } = receiverWith(flat);
    const answer = await send({ event: 'job.completed', task_id: 'task_5' });
    expect(answer.status).toBe(400);
    expect(answer.body).toContain('data.image_url');
    expect(events).toEqual([]);
  });

  it("verifies with the contract's scheme: the default scheme's signature is refused 401", async () => {
    const { send, events } = receiverWith(flat);
    expect((await send(flatCompleted(), { scheme: 'standard-webhooks' })).status).toBe(401);
    const forged = signDelivery({
      secret: 'whsec_b3RoZXItc2VjcmV0LW90aGVyLXNlY3JldA==',
      payload: flatCompleted(),
      scheme,
    });
    expect((await receiverWith(flat).receiver.receive({ method: 'POST', ...forged })).status).toBe(401);
    expect(events).toEqual([]);
  });

  it('takes the whole probe report, whose `contract` it adopts', async () => {
    const report = {
      signature: { scheme: 'hmac-sha256', header: 'x-signature' },
      payload: {},
      contract: flat,
    };
    const { send, events } = receiverWith(report);
    expect((await send(flatCompleted())).status).toBe(200);
    expect(events).toHaveLength(1);
  });

  it('a hand-off stores the mapped event, which a worker without the contract runs typed', async () => {
    const jobs: unknown[] = [];
    const { send } = receiverWith(flat, { handoff: { enqueue: (job: unknown) => void jobs.push(job) } });
    expect((await send(flatCompleted('task_6'))).status).toBe(200);
    const worker = createReceiver({ secret: SECRET });
    const seen: JobCompletedEvent[] = [];
    worker.onJobCompleted((event) => void seen.push(event));
    await worker.handleQueued(jobs[0] as never);
    expect(jobs[0]).toMatchObject({ key: 'job.completed:task_6', type: 'job.completed' });
    expect(seen[0]).toMatchObject({
      id: 'job.completed:task_6',
      data: { task_id: 'task_6', image_url: 'https://img.example/task_6.png' },
    });
  });

  it('an unsigned contract with dangerouslySkipVerification maps without checking', async () => {
    const { send, events } = receiverWith(
      { ...flat, signature: { scheme: 'unsigned' } },
      { dangerouslySkipVerification: true },
    );
    expect((await send(flatCompleted(), { scheme: 'unsigned' })).status).toBe(200);
    expect(events).toHaveLength(1);
  });
});

describe('a contract that cannot be used is refused at createReceiver', () => {
  const refused = (contract: unknown, more: Record<string, unknown> = {}) => {
    try {
      createReceiver({ secret: SECRET, contract: contract as ReceiverContract, ...more });
    } catch (error) {
      expect(error).toBeInstanceOf(JobhookError);
      expect((error as JobhookError).code).toBe('invalid_options');
      return (error as Error).message;
    }
    throw new Error('not refused');
  };
  const withPayload = (payload: Record<string, unknown>) => ({
    ...flat,
    payload: { ...flat.payload, ...payload },
  });
  const withSignature = (signature: Record<string, unknown>) => ({ ...flat, signature });

  it.each([
    ['not an object', 'standard-webhooks', /`contract` must be the `contract` of a `jobhook probe` report/],
    [
      'an unknown family',
      withSignature({ scheme: 'ed25519' }),
      /`contract.signature.scheme` must be "standard-webhooks", "hmac-sha256", "stripe", "unsigned", "unknown"; got a string/,
    ],
    [
      'unknown',
      withSignature({ scheme: 'unknown' }),
      /`contract.signature.scheme` is "unknown".*dangerouslySkipVerification/,
    ],
    [
      'unsigned',
      withSignature({ scheme: 'unsigned' }),
      /`contract.signature.scheme` is "unsigned": the sender signs nothing/,
    ],
    [
      'hmac-sha256 without its header',
      withSignature({ scheme: 'hmac-sha256' }),
      /`contract.signature.header` must be an HTTP header name; got nothing/,
    ],
    [
      'a header name with a space',
      withSignature({ scheme: 'stripe', header: 'x sig' }),
      /`contract.signature.header` must be an HTTP header name/,
    ],
    [
      'a wrong encoding',
      withSignature({ scheme: 'hmac-sha256', header: 'x-s', encoding: 'base32' }),
      /`contract.signature.encoding` must be "hex" or "base64"/,
    ],
    [
      'a wrong secret form',
      withSignature({ scheme: 'standard-webhooks', secretForm: 'hex' }),
      /`contract.signature.secretForm` must be "whsec-base64" or "utf8"/,
    ],
    [
      'a parameter of another family',
      withSignature({ scheme: 'standard-webhooks', header: 'x-s' }),
      /`contract.signature` \(standard-webhooks\) has no option `header`/,
    ],
    [
      'a missing task id path',
      withPayload({ taskIdPath: undefined }),
      /`contract.payload.taskIdPath` must be a dot path such as "data.task_id"; got nothing/,
    ],
    [
      'a malformed path',
      withPayload({ imageUrlPath: 'data..url' }),
      /`contract.payload.imageUrlPath` must be a dot path/,
    ],
    [
      'a path into a prototype',
      withPayload({ taskIdPath: 'data.__proto__.x' }),
      /`contract.payload.taskIdPath` must be a dot path/,
    ],
    [
      'a header path where a field is needed',
      withPayload({ taskIdPath: 'header:x-task' }),
      /`contract.payload.taskIdPath` must be a dot path/,
    ],
    [
      'a bad type path',
      withPayload({ typePath: 'header:' }),
      /`contract.payload.typePath` must be a dot path such as "data.task_id", or "header:<name>"/,
    ],
    [
      'equal type values',
      withPayload({ typeValues: { completed: 'x', failed: 'x' } }),
      /`contract.payload.typeValues` must be an object \{ completed, failed \} of two different non-empty strings/,
    ],
    [
      'an unknown payload key',
      withPayload({ taskPath: 'x' }),
      /`contract.payload` has no option `taskPath`: did you mean `taskIdPath`\?/,
    ],
    ['another version', { ...flat, version: 2 }, /`contract.version` must be 1; got a number/],
  ])('%s', (_name, contract, message) => {
    expect(refused(contract)).toMatch(message);
  });

  it('with a verifier: one or the other', () => {
    expect(refused(flat, { verifier: () => true })).toMatch(/pass `contract` or `verifier`, not both/);
  });

  it('an unknown or unsigned scheme is accepted with dangerouslySkipVerification', () => {
    for (const scheme of ['unknown', 'unsigned']) {
      expect(() =>
        createReceiver({
          contract: withSignature({ scheme }) as ReceiverContract,
          dangerouslySkipVerification: true,
        }),
      ).not.toThrow();
    }
  });
});
