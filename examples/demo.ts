/**
 * `npm run demo`: the main job end to end, on one machine, over real HTTP on 127.0.0.1.
 *
 * 1. Starts the gateway simulator (`jobhook/testing`), standing in for the real gateway.
 * 2. Starts a small Express app with a receiver mounted at /webhooks (`jobhook/express`).
 * 3. Registers the webhook on startup through the client, after the app listens.
 * 4. Submits a few image jobs (one is made to fail) and prints each typed event as it arrives.
 * 5. Prints a summary and exits 0, or prints one line and exits 1.
 *
 * Against a real gateway the app is the same: only the client's baseUrl and apiKey change, and the
 * secret comes from configuration instead of being generated here.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createReceiver } from 'jobhook';
import { createClient } from 'jobhook/client';
import { expressHandler } from 'jobhook/express';
import { sqliteDedupeStore } from 'jobhook/sqlite';
import { startGateway } from 'jobhook/testing';

const jobs = [
  { prompt: 'a lighthouse at dawn, oil painting', aspect_ratio: '16:9' },
  { prompt: 'a red fox asleep in fresh snow', aspect_ratio: '1:1' },
  { prompt: 'an impossible staircase', aspect_ratio: '3:4' }, // the simulator fails this one
];
const log = (line: string) => process.stdout.write(`${line}\n`);

async function main(): Promise<void> {
  const started = performance.now();

  // 1. The gateway simulator: jobs finish in milliseconds; prompts with "impossible" fail.
  const gateway = await startGateway({
    jobs: {
      outcome: ({ prompt }) =>
        prompt.includes('impossible')
          ? { status: 'failed', error: { code: 'generation_failed', message: 'The model cannot draw that.' } }
          : { status: 'completed' },
    },
  });
  log(`Gateway simulator at ${gateway.baseUrl}`);

  // 2. The app: the receiver's route comes before any body parser, which other routes may use.
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  const received = new Map<string, string>(); // task_id -> event type
  let allReceived: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (allReceived = resolve));
  const count = (taskId: string, type: string) => {
    received.set(taskId, type);
    if (received.size === jobs.length) allReceived();
  };
  // What was handled is kept in ./jobhook.db beside the app: a retry after a restart runs nothing twice.
  const receiver = createReceiver({ secret, dedupe: sqliteDedupeStore({ path: './jobhook.db' }) })
    .onJobCompleted((event) => {
      log(`  event  job.completed  ${event.data.task_id}  image: ${event.data.image_url}`);
      count(event.data.task_id, event.type);
    })
    .onJobFailed((event) => {
      const { code, message } = event.data.error;
      log(`  event  job.failed     ${event.data.task_id}  ${code}: ${message}`);
      count(event.data.task_id, event.type);
    });
  const app = express();
  app.post('/webhooks', expressHandler(receiver));
  app.use(express.json());
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  log(`App listening, receiver at ${url}`);

  try {
    // 3. Register on startup, now that the app answers.
    const client = createClient({ apiKey: gateway.apiKey, baseUrl: gateway.baseUrl });
    const { webhook, created } = await receiver.register({ client, url });
    log(`${created ? 'Registered' : 'Reusing'} webhook ${webhook.id} for ${webhook.events.join(', ')}`);

    // 4. Submit the jobs; their events arrive at the receiver as each job ends.
    for (const job of jobs) {
      const task = await client.images.generate({ model: 'demo-image-1', ...job });
      log(`  submit ${task.task_id}  "${job.prompt}" (${task.credits_used} credits)`);
    }
    const timer = setTimeout(() => allReceived(), 15_000); // a guard: never hang
    await done;
    clearTimeout(timer);
    if (received.size < jobs.length)
      throw new Error(`only ${received.size} of ${jobs.length} events arrived`);

    // 5. Summary.
    const balances = await client.account.balances();
    const failed = [...received.values()].filter((type) => type === 'job.failed').length;
    const seconds = ((performance.now() - started) / 1000).toFixed(2);
    log(
      `Done in ${seconds} s: ${jobs.length} jobs submitted, ${received.size} events received ` +
        `(${received.size - failed} completed, ${failed} failed), ${balances.remaining_credits} credits left.`,
    );
  } finally {
    server.close();
    await receiver.close();
    await gateway.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`demo failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
