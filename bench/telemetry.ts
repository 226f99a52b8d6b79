/**
 * What `jobhook/otel` costs per delivery: `receive()` of a 1 KB `job.completed` with the default
 * verifier, in-memory dedupe and one no-op handler, with and without `otelObserver()`.
 *
 *   npm run build && npx tsx bench/telemetry.ts
 *
 * Two phases, each interleaving its cases round by round (bench/measure.ts):
 * 1. no SDK registered (no context manager either): no observer vs an observer that does nothing
 *    (the hook's own cost) vs `otelObserver()`;
 * 2. an SDK registered as an app would (AsyncLocalStorage context manager, a tracer provider with
 *    a batch processor and a meter provider with a reader, both exporting to nowhere): no observer
 *    vs `otelObserver()`. The baseline of this phase pays the context manager too, as an app with
 *    an SDK does whether jobhook reports or not; the ratio is jobhook's share.
 * It measures the built package (dist/, as users install it: run `npm run build` first), not the
 * sources: run through tsx, the sources ran at half the speed and measured an observer at 1.16×
 * where the build gives 1.03×.
 */
import { context, metrics, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  MeterProvider,
  PeriodicExportingMetricReader,
  type PushMetricExporter,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import type * as Core from 'jobhook';
import type { ReceiverObserver } from 'jobhook';
import type * as Otel from 'jobhook/otel';
import { KB, SECRET, jobCompletedBody, standardHeaders, withFreshEventId } from './fixtures.js';
import { bench, compare, formatNs, median, ratio, type Case } from './measure.js';

const built = (file: string) => new URL(`../dist/${file}`, import.meta.url).href;
const { createReceiver } = (await import(built('index.js'))) as typeof Core;
const { otelObserver } = (await import(built('otel.js'))) as typeof Otel;

const options = { rounds: Number(process.env.ROUNDS ?? 15), batchMs: 100, warmupMs: 500 };
const body = jobCompletedBody(KB);
const noop = () => {};

/** Exports to nowhere: the SDK's own work (building, batching, aggregating) is what is measured. */
const nowhere: SpanExporter & PushMetricExporter = {
  export: (_items: unknown, done: (result: { code: 0 }) => void) => done({ code: 0 }),
  shutdown: async () => {},
  forceFlush: async () => {},
};

async function receiverCase(name: string, observer?: ReceiverObserver): Promise<Case> {
  const receiver = createReceiver({ secret: SECRET, ...(observer && { observer }) }).onJobCompleted(noop);
  const first = await receiver.receive({ headers: standardHeaders(body), body });
  if (first.status !== 200) throw new Error(`${name}: receive() answered ${first.status} ${first.body}`);
  return bench(
    name,
    // A fresh event per delivery (jobhook dedupes by the payload's id), so that each one is
    // claimed, handled and recorded, as in production, rather than answered as a duplicate.
    (n) =>
      Array.from({ length: n }, () => {
        const fresh = withFreshEventId(body);
        return { headers: standardHeaders(fresh), body: fresh };
      }),
    (deliveries, i) => receiver.receive(deliveries[i]!),
  );
}

function report(title: string, samples: Record<string, number[]>, base: string) {
  console.log(`\n${title}`);
  for (const [name, values] of Object.entries(samples)) {
    const versus = name === base ? '' : `, ${ratio(samples, name, base).toFixed(3)}× ${base}`;
    console.log(`  ${name.padEnd(32)} ${formatNs(median(values)).padStart(9)} per delivery${versus}`);
  }
}

const BASE = 'no observer';
const OBSERVED = 'otelObserver()';
/** The observer hook alone, with an observer that does nothing: jobhook's part of the cost. */
const EMPTY = 'an observer doing nothing';
const empty: ReceiverObserver = { start: () => undefined, end: () => {} };

// Phase 1: nothing registered.
const bare = await compare(
  [await receiverCase(BASE), await receiverCase(EMPTY, empty), await receiverCase(OBSERVED, otelObserver())],
  options,
);
report(
  `1 KB receive(), no OpenTelemetry SDK registered (${options.rounds} interleaved rounds, medians)`,
  bare,
  BASE,
);

// Phase 2: an SDK registered globally, as NodeSDK.start() would.
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(nowhere)] });
trace.setGlobalTracerProvider(tracerProvider);
const meterProvider = new MeterProvider({
  readers: [new PeriodicExportingMetricReader({ exporter: nowhere, exportIntervalMillis: 1000 })],
});
metrics.setGlobalMeterProvider(meterProvider);

const withSdk = await compare(
  [await receiverCase(BASE), await receiverCase(OBSERVED, otelObserver())],
  options,
);
report(`1 KB receive(), an OpenTelemetry SDK registered (traces and metrics)`, withSdk, BASE);

await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()]);
