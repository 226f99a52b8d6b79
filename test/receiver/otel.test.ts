// jobhook/otel with the OpenTelemetry SDK's in-memory exporters, over real HTTP through the Node
// adapter: a test server starts an HTTP server span around each request, as an HTTP
// instrumentation would, and the delivery's span must be its child.
import { createServer } from 'node:http';
import { context, metrics, trace, SpanKind, SpanStatusCode, type Attributes } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  DataPointType,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type DataPoint,
  type Histogram,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { createReceiver } from 'jobhook';
import { nodeHandler } from 'jobhook/node';
import { otelObserver } from 'jobhook/otel';
import { signDelivery } from 'jobhook/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { listen, type Running } from '../adapters/http.js';
import { completedPayload, deferred, failedPayload, SECRET } from '../fixtures.js';

const spans = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const metricReader = new PeriodicExportingMetricReader({
  exporter: metricExporter,
  exportIntervalMillis: 3_600_000,
});
const meterProvider = new MeterProvider({ readers: [metricReader] });
const contextManager = new AsyncLocalStorageContextManager();

/** The span name of the test's stand-in for an HTTP instrumentation. */
const SERVER_SPAN = 'POST /webhooks';
/** A handler that throws says the secret: it must reach no span nor metric. */
const LEAKY = 'leaky';

let server: Running;
let release = deferred();
const slowStarted = { count: 0 };

beforeAll(async () => {
  // Registered globally, as an SDK's start() does: otelObserver() uses the global providers.
  context.setGlobalContextManager(contextManager.enable());
  trace.setGlobalTracerProvider(tracerProvider);
  metrics.setGlobalMeterProvider(meterProvider);

  const handlerTracer = trace.getTracer('app');
  const receiver = createReceiver({ secret: SECRET, observer: otelObserver() })
    .onJobCompleted((event) => {
      // Work a handler traces must be a child of the delivery's span.
      handlerTracer.startSpan('save image').end();
      if (event.data.task_id === LEAKY) throw new Error(`cannot save with ${SECRET}`);
    })
    .onJobFailed(async () => {
      slowStarted.count++;
      await release.promise;
    });
  const handle = nodeHandler(receiver);
  const httpTracer = trace.getTracer('http-test');
  server = await listen(
    createServer((req, res) => {
      httpTracer.startActiveSpan(SERVER_SPAN, { kind: SpanKind.SERVER }, (span) => {
        res.on('close', () => span.end());
        handle(req, res);
      });
    }),
  );
});

afterAll(async () => {
  await server?.close();
  await meterProvider.shutdown();
  await tracerProvider.shutdown();
  trace.disable();
  metrics.disable();
  context.disable();
});

beforeEach(() => {
  spans.reset();
  release = deferred();
});

async function post(delivery: { headers: Record<string, string>; body: string | Uint8Array }) {
  const response = await fetch(`${server.origin}/webhooks`, {
    method: 'POST',
    headers: delivery.headers,
    body: delivery.body as BodyInit,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The spans ended so far, once the server span of each request has ended too. */
async function finished(requests: number): Promise<ReadableSpan[]> {
  for (let i = 0; i < 200; i++) {
    const ended = spans.getFinishedSpans();
    if (ended.filter((span) => span.name === SERVER_SPAN).length >= requests) return ended;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`fewer than ${requests} server spans ended`);
}

/** The one delivery span under each server span, with its parent checked. */
function deliverySpans(ended: ReadableSpan[]): ReadableSpan[] {
  const servers = ended.filter((span) => span.name === SERVER_SPAN);
  return servers.map((parent) => {
    const children = ended.filter(
      (span) => span.parentSpanContext?.spanId === parent.spanContext().spanId && span.name !== SERVER_SPAN,
    );
    expect(children).toHaveLength(1);
    const child = children[0]!;
    expect(child.spanContext().traceId).toBe(parent.spanContext().traceId);
    return child;
  });
}

const messaging = {
  'messaging.system': 'webhook',
  'messaging.operation.type': 'process',
  'messaging.operation.name': 'process',
};

describe('a span per delivery', () => {
  it('a handled delivery: `process job.completed`, CONSUMER, child of the HTTP server span, parent of the handler’s spans', async () => {
    const delivery = signDelivery({ secret: SECRET, payload: completedPayload({ id: 'evt_span_ok' }) });
    expect(await post(delivery)).toMatchObject({ status: 200, body: { ok: true } });

    const ended = await finished(1);
    const [span] = deliverySpans(ended);
    expect(span!.name).toBe('process job.completed');
    expect(span!.kind).toBe(SpanKind.CONSUMER);
    expect(span!.instrumentationScope.name).toBe('jobhook');
    expect(span!.status.code).toBe(SpanStatusCode.UNSET);
    expect(span!.attributes).toEqual({
      ...messaging,
      'messaging.message.id': delivery.id,
      'messaging.destination.name': 'job.completed',
      'jobhook.event.type': 'job.completed',
      'jobhook.dedupe': 'new',
      'jobhook.outcome': 'ok',
      'http.response.status_code': 200,
    });
    const handlerSpan = ended.find((s) => s.name === 'save image');
    expect(handlerSpan?.parentSpanContext?.spanId).toBe(span!.spanContext().spanId);
  });

  it('a duplicate: dedupe `duplicate`, outcome `duplicate`, 200', async () => {
    const payload = completedPayload({ id: 'evt_span_dup' });
    await post(signDelivery({ secret: SECRET, payload }));
    const again = signDelivery({ secret: SECRET, payload });
    expect(await post(again)).toMatchObject({ status: 200, body: { duplicate: true } });

    const [, second] = deliverySpans(await finished(2));
    expect(second!.name).toBe('process job.completed');
    expect(second!.attributes).toMatchObject({
      'messaging.message.id': again.id,
      'jobhook.dedupe': 'duplicate',
      'jobhook.outcome': 'duplicate',
      'http.response.status_code': 200,
    });
  });

  it('one in progress: dedupe `in_progress`, 409, the answer code', async () => {
    const payload = failedPayload({ id: 'evt_span_busy' });
    const first = post(signDelivery({ secret: SECRET, payload }));
    while (slowStarted.count === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const busy = signDelivery({ secret: SECRET, payload });
    expect((await post(busy)).status).toBe(409);
    release.resolve();
    expect((await first).status).toBe(200);

    const processed = deliverySpans(await finished(2));
    const byId = new Map(processed.map((span) => [span.attributes['messaging.message.id'], span]));
    expect(byId.get(busy.id)!.name).toBe('process job.failed');
    expect(byId.get(busy.id)!.attributes).toMatchObject({
      'messaging.destination.name': 'job.failed',
      'jobhook.dedupe': 'in_progress',
      'jobhook.outcome': 'in_progress',
      'jobhook.answer.code': 'in_progress',
      'http.response.status_code': 409,
    });
    expect(byId.get(busy.id)!.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('a failing handler: error status, `error.type` handler_failed, 500', async () => {
    const signed = signDelivery({
      secret: SECRET,
      payload: completedPayload({ id: 'evt_span_fail', data: leakyData() }),
    });
    expect((await post(signed)).status).toBe(500);

    const [span] = deliverySpans(await finished(1));
    expect(span!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'handler_failed' });
    expect(span!.attributes).toMatchObject({
      'messaging.message.id': signed.id,
      'jobhook.outcome': 'failed',
      'jobhook.answer.code': 'handler_failed',
      'error.type': 'handler_failed',
      'http.response.status_code': 500,
    });
  });

  it.each([
    ['missing_header', (headers: Record<string, string>) => delete headers['webhook-signature']],
    ['malformed_header', (headers: Record<string, string>) => (headers['webhook-timestamp'] = 'soon')],
    [
      'stale_timestamp',
      (headers: Record<string, string>) =>
        (headers['webhook-timestamp'] = String(Math.floor(Date.now() / 1000) - 3600)),
    ],
    [
      'no_match',
      (headers: Record<string, string>) => (headers['webhook-signature'] = `v1,${'A'.repeat(43)}=`),
    ],
  ])('a 401 (%s): span `process`, the refusal code, no message id or type', async (refusal, spoil) => {
    const delivery = signDelivery({ secret: SECRET, payload: completedPayload() });
    spoil(delivery.headers);
    expect((await post(delivery)).status).toBe(401);

    const [span] = deliverySpans(await finished(1));
    expect(span!.name).toBe('process');
    expect(span!.attributes).toEqual({
      ...messaging,
      'jobhook.outcome': 'refused',
      'jobhook.refusal': refusal,
      'jobhook.answer.code': 'invalid_signature',
      'http.response.status_code': 401,
    });
  });
});

describe('metrics', () => {
  it('counts deliveries by outcome and refusal, and times handlers', async () => {
    await metricReader.forceFlush();
    const exported = metricExporter.getMetrics().at(-1)!;
    const all = exported.scopeMetrics
      .filter((scope) => scope.scope.name === 'jobhook')
      .flatMap((s) => s.metrics);
    const deliveries = metric(all, 'jobhook.deliveries');
    expect(deliveries.descriptor.unit).toBe('{delivery}');
    const count = (attributes: Attributes) =>
      (deliveries.dataPoints as DataPoint<number>[])
        .filter((point) => Object.entries(attributes).every(([k, v]) => point.attributes[k] === v))
        .reduce((sum, point) => sum + point.value, 0);

    // What the span tests above sent (they run first, in this file's order).
    expect(count({ 'jobhook.outcome': 'ok', 'messaging.destination.name': 'job.completed' })).toBe(2);
    expect(count({ 'jobhook.outcome': 'ok', 'messaging.destination.name': 'job.failed' })).toBe(1);
    expect(count({ 'jobhook.outcome': 'duplicate', 'http.response.status_code': 200 })).toBe(1);
    expect(count({ 'jobhook.outcome': 'in_progress', 'jobhook.answer.code': 'in_progress' })).toBe(1);
    expect(count({ 'jobhook.outcome': 'failed', 'jobhook.answer.code': 'handler_failed' })).toBe(1);
    for (const refusal of ['missing_header', 'malformed_header', 'stale_timestamp', 'no_match']) {
      expect(
        count({ 'jobhook.outcome': 'refused', 'jobhook.refusal': refusal, 'http.response.status_code': 401 }),
      ).toBe(1);
    }
    expect(count({})).toBe(10);

    const handlers = metric(all, 'jobhook.handler.duration');
    expect(handlers.descriptor.unit).toBe('s');
    expect(handlers.dataPointType).toBe(DataPointType.HISTOGRAM);
    const points = handlers.dataPoints as DataPoint<Histogram>[];
    const histogram = (attributes: Attributes) =>
      points.find((point) => Object.entries(attributes).every(([k, v]) => point.attributes[k] === v))?.value;
    // Handlers ran for the first of each event: two completed (one failed) and the slow failed one.
    expect(histogram({ 'messaging.destination.name': 'job.completed', 'jobhook.outcome': 'ok' })?.count).toBe(
      2,
    );
    const failed = histogram({ 'messaging.destination.name': 'job.completed', 'jobhook.outcome': 'failed' });
    expect(failed).toMatchObject({ count: 1 });
    const slow = histogram({ 'messaging.destination.name': 'job.failed', 'jobhook.outcome': 'ok' })!;
    expect(slow.count).toBe(1);
    // The slow handler waited for a second request's round trip: longer than a synchronous one.
    expect(slow.sum).toBeGreaterThan(0);
    expect(points.reduce((sum, point) => sum + point.value.count, 0)).toBe(4);
  });

  it('times hand-offs that a queue worker reports', async () => {
    const observer = otelObserver();
    observer.handoff!({ deliveryId: 'msg_1', type: 'job.completed', latencyMs: 250 });
    observer.handoff!({ deliveryId: 'msg_2', type: 'job.completed', latencyMs: 750 });
    await metricReader.forceFlush();
    const all = metricExporter
      .getMetrics()
      .at(-1)!
      .scopeMetrics.flatMap((scope) => scope.metrics);
    const latency = metric(all, 'jobhook.handoff.latency');
    expect(latency.descriptor.unit).toBe('s');
    const [point] = latency.dataPoints as DataPoint<Histogram>[];
    expect(point!.attributes).toEqual({
      'messaging.system': 'webhook',
      'messaging.destination.name': 'job.completed',
    });
    expect(point!.value).toMatchObject({ count: 2, sum: 1 });
  });

  it('carries no secret, signature, header or body in any span or metric', async () => {
    // One more delivery of each kind, with the secret in a handler's error, then everything recorded.
    spans.reset();
    const sent = [
      signDelivery({ secret: SECRET, payload: completedPayload({ data: leakyData() }) }),
      signDelivery({ secret: SECRET, payload: completedPayload() }),
      signDelivery({
        secret: `whsec_${Buffer.from('another-secret-0123456789').toString('base64')}`,
        payload: completedPayload(),
      }),
    ];
    for (const delivery of sent) await post(delivery);
    await finished(sent.length);
    await metricReader.forceFlush();

    const recorded: string[] = [];
    for (const span of spans.getFinishedSpans()) {
      recorded.push(span.name, String(span.status.message ?? ''));
      for (const value of Object.values(span.attributes)) recorded.push(String(value));
      for (const event of span.events) recorded.push(event.name, JSON.stringify(event.attributes ?? {}));
    }
    for (const scope of metricExporter.getMetrics().at(-1)!.scopeMetrics) {
      for (const data of scope.metrics) {
        for (const point of data.dataPoints)
          for (const value of Object.values(point.attributes)) recorded.push(String(value));
      }
    }
    expect(recorded.length).toBeGreaterThan(20);
    const forbidden = [
      SECRET,
      SECRET.slice('whsec_'.length),
      Buffer.from(SECRET.slice('whsec_'.length), 'base64').toString(),
      ...sent.map((delivery) => delivery.headers['webhook-signature']!),
      ...sent.flatMap((delivery) =>
        delivery.headers['webhook-signature']!.split(' ').map((s) => s.split(',')[1]!),
      ),
      ...sent.map((delivery) => delivery.body as string),
      LEAKY,
      'image_url',
    ];
    for (const value of recorded) {
      for (const secret of forbidden) expect(value).not.toContain(secret);
    }
  });
});

function leakyData() {
  return { task_id: LEAKY, status: 'completed', image_url: 'https://img.example/leaky.png' };
}

function metric(all: MetricData[], name: string): MetricData {
  const found = all.find((data) => data.descriptor.name === name);
  if (!found)
    throw new Error(`no metric ${name} among ${all.map((data) => data.descriptor.name).join(', ')}`);
  return found;
}
