// The pipeline's poll door: an outcome found by polling runs through the same validation, store
// and handlers as a webhook, so a poll and a webhook of one outcome (one key) run the handlers
// once, whichever comes first.
import { signDelivery } from 'jobhook/testing';
import { describe, expect, it } from 'vitest';
import type { JobhookError } from '../../src/common/errors.js';
import { defaultSchemas } from '../../src/events/schemas.js';
import { jobResults } from '../../src/results/job-results.js';
import { failureReporter } from '../../src/receiver/failures.js';
import { inFlightTracker } from '../../src/receiver/in-flight.js';
import { resolveOptions, type ReceiverOptions } from '../../src/receiver/options.js';
import { createPipeline, type PolledOutcome } from '../../src/receiver/pipeline.js';
import type { DeliveryContext, EventHandler } from '../../src/receiver/run-handlers.js';
import { completedPayload, deferred, SECRET } from '../support/deliveries.js';

/** A pipeline as createReceiver builds one, with one `job.completed` handler. */
function pipelineWith(handler: EventHandler<unknown>, options: Partial<ReceiverOptions> = {}) {
  const config = resolveOptions({ secret: SECRET, logger: { error: () => {} }, ...options });
  const lifecycle = inFlightTracker();
  const failures: JobhookError[] = [];
  const pipeline = createPipeline({
    config,
    schemas: { ...defaultSchemas },
    handlersFor: (type) => (type === 'job.completed' ? [handler] : []),
    results: jobResults(undefined, config.logger, config.now),
    report: failureReporter([(error) => void failures.push(error)], config.redact, config.logger, lifecycle),
    lifecycle,
  });
  return { pipeline, lifecycle, failures };
}

const polled = (id: string): PolledOutcome => ({ payload: completedPayload({ id }) });

describe('handlePolled', () => {
  it('runs the handlers with source "poll", once per key: handled, then duplicate', async () => {
    const seen: DeliveryContext[] = [];
    const { pipeline } = pipelineWith((_event, context) => void seen.push(context));
    expect(await pipeline.handlePolled(polled('evt_poll_1'))).toBe('handled');
    expect(await pipeline.handlePolled(polled('evt_poll_1'))).toBe('duplicate');
    expect(seen.map((context) => [context.source, context.type])).toEqual([['poll', 'job.completed']]);
  });

  it('a webhook after the poll is a duplicate, and a poll after the webhook too: one run each way', async () => {
    const sources: string[] = [];
    const { pipeline } = pipelineWith((_event, context) => void sources.push(context.source));
    const first = signDelivery({ secret: SECRET, payload: completedPayload({ id: 'evt_a' }) });
    expect(await pipeline.handlePolled(polled('evt_a'))).toBe('handled');
    expect((await pipeline.receive(first)).body).toBe('{"ok":true,"duplicate":true}');

    const second = signDelivery({ secret: SECRET, payload: completedPayload({ id: 'evt_b' }) });
    expect((await pipeline.receive(second)).status).toBe(200);
    expect(await pipeline.handlePolled(polled('evt_b'))).toBe('duplicate');
    expect(sources).toEqual(['poll', 'webhook']);
  });

  it('answers busy while the webhook of the same key runs, and failed when a handler fails', async () => {
    const release = deferred();
    const started = deferred();
    let calls = 0;
    const { pipeline, failures } = pipelineWith(async (event) => {
      calls++;
      if ((event as { id: string }).id === 'evt_fail') throw new Error('no');
      started.resolve();
      await release.promise;
    });
    const webhook = pipeline.receive(
      signDelivery({ secret: SECRET, payload: completedPayload({ id: 'evt_c' }) }),
    );
    await started.promise;
    expect(await pipeline.handlePolled(polled('evt_c'))).toBe('busy');
    release.resolve();
    expect((await webhook).status).toBe(200);
    expect(await pipeline.handlePolled(polled('evt_fail'))).toBe('failed');
    expect(failures.map((failure) => failure.code)).toEqual(['handler_failed']);
    // Released on failure: a later attempt runs again.
    expect(await pipeline.handlePolled(polled('evt_fail'))).toBe('failed');
    expect(calls).toBe(3);
  });

  it('hands the event off with a hand-off, marked as polled', async () => {
    const jobs: unknown[] = [];
    const { pipeline } = pipelineWith(() => {}, {
      handoff: {
        enqueue: (job) => {
          jobs.push(job);
          return Promise.resolve();
        },
      },
    });
    expect(await pipeline.handlePolled(polled('evt_h'))).toBe('handled');
    expect(jobs).toEqual([expect.objectContaining({ key: 'evt_h', type: 'job.completed', source: 'poll' })]);
  });

  it('refuses, for good, an outcome its schema refuses', async () => {
    let calls = 0;
    const { pipeline } = pipelineWith(() => void calls++);
    expect(await pipeline.handlePolled({ payload: { type: 'job.completed', id: 'evt_bad', data: {} } })).toBe(
      'invalid',
    );
    expect(calls).toBe(0);
  });

  it('is counted as in flight (close() waits for it) and refused once closing', async () => {
    const release = deferred();
    const { pipeline, lifecycle } = pipelineWith(() => release.promise);
    const running = pipeline.handlePolled(polled('evt_d'));
    expect(lifecycle.pending).toBe(1);
    const closed = lifecycle.close(0);
    expect(await pipeline.handlePolled(polled('evt_e'))).toBe('failed');
    release.resolve();
    expect(await running).toBe('handled');
    expect(await closed).toBe(true);
  });
});
