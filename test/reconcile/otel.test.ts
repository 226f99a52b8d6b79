// otelObserver() counts what the reconciler reports: failed deliveries the gateway counted,
// expired tasks, polls and outcomes dispatched by poll.
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import { otelObserver } from 'jobhook/otel';
import { expect, it } from 'vitest';

it('adds failed deliveries, expired tasks, polls and dispatched outcomes to counters', async () => {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const observer = otelObserver({ meterProvider });
  observer.deliveriesFailed?.({
    url: 'https://my.app/hook',
    failed: 12,
    totalFailed: 12,
    since: 0,
    lastError: 'x',
  });
  observer.deliveriesFailed?.({
    url: 'https://my.app/hook',
    failed: 3,
    totalFailed: 15,
    since: 0,
    lastError: 'x',
  });
  observer.jobExpired?.({ taskId: 'task_1', status: 'unknown', ageMs: 1 });
  observer.reconciled?.({ polled: 5, dispatched: 2, pending: 3, rateLimited: false });
  await reader.forceFlush();
  const all = exporter.getMetrics().flatMap((batch) => batch.scopeMetrics.flatMap((scope) => scope.metrics));
  const total = (name: string) => {
    const found = all.filter((data: MetricData) => data.descriptor.name === name).at(-1);
    return found?.dataPoints.reduce((sum, point) => sum + (point.value as number), 0);
  };
  expect(total('jobhook.gateway.deliveries.failed')).toBe(15);
  expect(total('jobhook.jobs.expired')).toBe(1);
  expect(total('jobhook.reconcile.polls')).toBe(5);
  expect(total('jobhook.reconcile.dispatched')).toBe(2);
  await meterProvider.shutdown();
});
