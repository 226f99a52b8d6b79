// webhooks.test.ts: a signed delivery in, the handler's effect and the answer out; no server, no network.
import { signDelivery } from 'jobhook/testing';
import { expect, test } from 'vitest';
import { createWebhooks, type Images } from './webhooks.js';

// Any secret will do: the test signs with the one it gives the receiver.
const secret = 'whsec_d87+31cMywh807HRG8J5YsNfJMoQU98O';

/** Images kept in arrays, to see what the handlers did. */
function memoryImages() {
  const saved: Parameters<Images['saved']>[0][] = [];
  const failed: Parameters<Images['failed']>[0][] = [];
  const images: Images = {
    saved: async (image) => void saved.push(image),
    failed: async (job) => void failed.push(job),
  };
  return { images, saved, failed };
}

/** A `job.completed` event as the gateway sends it. */
function completed(taskId: string) {
  return {
    id: `evt_${taskId}`,
    type: 'job.completed',
    created_at: new Date().toISOString(),
    data: { task_id: taskId, status: 'completed', image_url: `https://images.example/${taskId}.png` },
  };
}

test('a completed job saves its image and answers 200', async () => {
  const { images, saved } = memoryImages();
  const receiver = createWebhooks(images, { secret });
  const delivery = signDelivery({ secret, payload: completed('task_1') });

  const answer = await receiver.receive({ headers: delivery.headers, body: delivery.body });

  expect(answer.status).toBe(200);
  expect(saved).toEqual([{ tenant: undefined, taskId: 'task_1', url: 'https://images.example/task_1.png' }]);
});

test('the same event delivered twice runs the handler once', async () => {
  const { images, saved } = memoryImages();
  const receiver = createWebhooks(images, { secret });
  const delivery = signDelivery({ secret, payload: completed('task_2') });

  await receiver.receive({ headers: delivery.headers, body: delivery.body });
  const again = await receiver.receive({ headers: delivery.headers, body: delivery.body });

  expect(again.status).toBe(200);
  expect(JSON.parse(again.body)).toEqual({ ok: true, duplicate: true });
  expect(saved).toHaveLength(1);
});

test('a handler that throws answers 500 and reaches onError; the retry runs it again', async () => {
  const { images, saved } = memoryImages();
  let databaseDown = true;
  const flaky: Images = {
    ...images,
    saved: async (image) => {
      if (databaseDown) throw new Error('database unavailable');
      await images.saved(image);
    },
  };
  const errors: string[] = [];
  const receiver = createWebhooks(flaky, { secret }).onError((error, { type }) => {
    errors.push(`${type} ${error.code}: ${(error.cause as Error).message}`);
  });
  const delivery = signDelivery({ secret, payload: completed('task_3') });

  const answer = await receiver.receive({ headers: delivery.headers, body: delivery.body });

  expect(answer.status).toBe(500);
  expect(JSON.parse(answer.body).error.code).toBe('handler_failed');
  expect(errors).toEqual(['job.completed handler_failed: database unavailable']);

  // The gateway retries a 500, and the event was not marked handled: the handler runs again.
  databaseDown = false;
  const retried = await receiver.receive({ headers: delivery.headers, body: delivery.body });
  expect(retried.status).toBe(200);
  expect(saved).toHaveLength(1);
});

test('a failed job is marked failed with its reason', async () => {
  const { images, failed } = memoryImages();
  const receiver = createWebhooks(images, { secret });
  const delivery = signDelivery({
    secret,
    payload: {
      id: 'evt_task_4',
      type: 'job.failed',
      created_at: new Date().toISOString(),
      data: {
        task_id: 'task_4',
        status: 'failed',
        error: { code: 'content_policy', message: 'The prompt was refused.' },
      },
    },
  });

  const answer = await receiver.receive({ headers: delivery.headers, body: delivery.body });

  expect(answer.status).toBe(200);
  expect(failed).toEqual([{ tenant: undefined, taskId: 'task_4', reason: 'The prompt was refused.' }]);
});

test('a delivery signed with another secret is refused 401, logged, and runs nothing', async () => {
  const { images, saved } = memoryImages();
  const lines: string[] = [];
  const receiver = createWebhooks(images, {
    secret,
    logger: { error: (line) => lines.push(line), warn: (line) => lines.push(line) },
  });
  const delivery = signDelivery({
    secret: 'whsec_czseZXyRXE/ZE/Azy2pt8UTlgU4OVw33',
    payload: completed('task_5'),
  });

  const answer = await receiver.receive({ headers: delivery.headers, body: delivery.body });

  expect(answer.status).toBe(401);
  expect(JSON.parse(answer.body).error.code).toBe('invalid_signature');
  expect(lines).toEqual([expect.stringContaining('refused a delivery (401 no_match)')]);
  expect(saved).toEqual([]);
});

test("many tenants on one route: each event is its tenant's, and no tenant's secret opens another's", async () => {
  const accounts = new Map([
    ['acme', 'whsec_e6Sb4uf4Iei7AisnbfTa3TENonXfFNEq'],
    ['globex', 'whsec_VA0EYh7D/nXt4EM6buBut/uFtIGNT548'],
  ]);
  const { images, saved } = memoryImages();
  const receiver = createWebhooks(images, {
    // The route is /webhooks/:account; the function picks that account's secret and names it.
    secret: ({ url }) => {
      const account = new URL(url!).pathname.split('/')[2]!;
      const secret = accounts.get(account);
      return secret === undefined ? undefined : { tenant: account, secret };
    },
    logger: { error: (line) => console.error(line) }, // no `warn`: the refusals below are expected
  });
  const send = (account: string, signedWith: string, taskId: string) => {
    const delivery = signDelivery({ secret: signedWith, payload: completed(taskId) });
    const url = `https://app.example/webhooks/${account}`;
    return receiver.receive({ headers: delivery.headers, body: delivery.body, url });
  };

  expect((await send('acme', accounts.get('acme')!, 'task_6')).status).toBe(200);
  // The same event id from another tenant is that tenant's event, not a duplicate.
  expect((await send('globex', accounts.get('globex')!, 'task_6')).status).toBe(200);
  // Another tenant's secret, or a tenant that does not exist: the answer of a wrong signature.
  expect((await send('acme', accounts.get('globex')!, 'task_7')).status).toBe(401);
  expect((await send('initech', accounts.get('globex')!, 'task_7')).status).toBe(401);

  expect(saved.map(({ tenant, taskId }) => `${tenant} ${taskId}`)).toEqual(['acme task_6', 'globex task_6']);
});
