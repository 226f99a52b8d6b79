import { optionNames, refuseUnknownOptions } from '../common/option-checks.js';
import {
  context,
  metrics,
  trace,
  SpanKind,
  SpanStatusCode,
  type Attributes,
  type Counter,
  type Histogram,
  type MeterProvider,
  type Span,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import type { ObservedDelivery, ObservedHandoff, ReceiverObserver } from '../receiver/observe.js';
import type {
  DeliveryFailures,
  ExpiredJob,
  ReconcileObserver,
  ReconcileResult,
} from '../reconcile/options.js';

/** Options of {@link otelObserver}. Both default to the globally registered providers. */
export interface OtelObserverOptions {
  /** Where spans go. Default: the global one (`trace.setGlobalTracerProvider`, or an SDK's `start()`). */
  tracerProvider?: TracerProvider;
  /** Where metrics go. Default: the global one (`metrics.setGlobalMeterProvider`, or an SDK's `start()`). */
  meterProvider?: MeterProvider;
}

/** The instrumentation scope. */
const SCOPE = 'jobhook';

/** `messaging.system`: the conventions name the carrier of the messages (here a webhook), not the library. */
export const MESSAGING_SYSTEM = 'webhook';

/** Bucket boundaries in seconds, from 1 ms (a synchronous handler) to the 10 s handler time-out. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface Instruments {
  deliveries: Counter;
  handlerDuration: Histogram;
  handoffLatency: Histogram;
  deliveriesFailed: Counter;
  jobsExpired: Counter;
  signatureAlarms: Counter;
  polls: Counter;
  dispatched: Counter;
}

const OTEL_OBSERVER_OPTIONS = optionNames<OtelObserverOptions>()(['tracerProvider', 'meterProvider']);

/**
 * Reports each delivery to OpenTelemetry: `createReceiver({ secret, observer: otelObserver() })`.
 * - One `CONSUMER` span per delivery, `process <event type>`: a child of the active span (your HTTP
 *   server span) and the active one while handlers run; never a secret, a header or the body.
 * - Metrics (docs/observability.md): `jobhook.deliveries`, `jobhook.handler.duration` and
 *   `jobhook.handoff.latency`; with `reconcile`, the counters `jobhook.gateway.deliveries.failed`,
 *   `jobhook.jobs.expired`, `jobhook.reconcile.polls`, `jobhook.reconcile.dispatched` and
 *   `jobhook.signature.alarms` (deliveries keep arriving and none verifies: wire it to alerting).
 *
 * It registers no SDK; without one, each delivery costs a no-op span and a few no-op calls.
 */
export function otelObserver(options: OtelObserverOptions = {}): ReceiverObserver<Span> & ReconcileObserver {
  refuseUnknownOptions(options, OTEL_OBSERVER_OPTIONS, 'otelObserver');
  const tracer: Tracer = (options.tracerProvider ?? trace).getTracer(SCOPE);
  // The metrics API has no proxy: a meter taken before the SDK registers stays a no-op. So the
  // instruments follow the provider that is registered now (one global read per delivery).
  let instrumentsOf: MeterProvider | undefined;
  let instruments: Instruments | undefined;
  const current = (): Instruments => {
    const provider = options.meterProvider ?? metrics.getMeterProvider();
    if (provider !== instrumentsOf || !instruments) {
      instruments = createInstruments(provider);
      instrumentsOf = provider;
    }
    return instruments;
  };

  return {
    start: () => tracer.startSpan('process', { kind: SpanKind.CONSUMER, attributes: START_ATTRIBUTES }),
    within: (span, work) =>
      span.isRecording() ? context.with(trace.setSpan(context.active(), span), work) : work(),
    end(span, delivery) {
      if (span.isRecording()) {
        if (delivery.type !== undefined) span.updateName(`process ${delivery.type}`);
        span.setAttributes(spanAttributes(delivery));
        if (delivery.outcome === 'failed') {
          span.setStatus({ code: SpanStatusCode.ERROR, message: delivery.code ?? String(delivery.status) });
        }
      }
      span.end();
      const { deliveries, handlerDuration } = current();
      deliveries.add(1, deliveryAttributes(delivery));
      if (delivery.handlerMs !== undefined) {
        handlerDuration.record(delivery.handlerMs / 1000, handlerAttributes(delivery));
      }
    },
    handoff(handoff: ObservedHandoff) {
      current().handoffLatency.record(handoff.latencyMs / 1000, {
        'messaging.system': MESSAGING_SYSTEM,
        'messaging.destination.name': handoff.type,
      });
    },
    deliveriesFailed(failures: DeliveryFailures) {
      current().deliveriesFailed.add(failures.failed, { 'messaging.system': MESSAGING_SYSTEM });
    },
    jobExpired(job: ExpiredJob) {
      current().jobsExpired.add(1, { 'jobhook.task.status': job.status ?? 'unreadable' });
    },
    signaturesFailing(alarm) {
      // Confirmed: the gateway's own counters bear it out, the one worth paging on.
      const confirmed = alarm?.confirmed === true;
      current().signatureAlarms.add(1, {
        'messaging.system': MESSAGING_SYSTEM,
        'jobhook.alarm.confirmed': confirmed,
      });
    },
    reconciled(pass: ReconcileResult) {
      const { polls, dispatched } = current();
      if (pass.polled > 0) polls.add(pass.polled);
      if (pass.dispatched > 0) dispatched.add(pass.dispatched);
    },
  };
}

function createInstruments(provider: MeterProvider): Instruments {
  const meter = provider.getMeter(SCOPE);
  return {
    deliveries: meter.createCounter('jobhook.deliveries', {
      description: 'Deliveries answered, by outcome (ok, duplicate, in_progress, refused, rejected, failed).',
      unit: '{delivery}',
    }),
    handlerDuration: meter.createHistogram('jobhook.handler.duration', {
      description: "How long a delivery's handlers ran until it was answered.",
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    }),
    handoffLatency: meter.createHistogram('jobhook.handoff.latency', {
      description: 'From the hand-off of a delivery to a queue to the moment a worker started it.',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    }),
    deliveriesFailed: meter.createCounter('jobhook.gateway.deliveries.failed', {
      description: "Deliveries the gateway counted as failed to this receiver's webhook (its total_failed).",
      unit: '{delivery}',
    }),
    jobsExpired: meter.createCounter('jobhook.jobs.expired', {
      description: "Tracked tasks still not ended at the tracker's maxAgeMs, no longer tracked.",
      unit: '{task}',
    }),
    signatureAlarms: meter.createCounter('jobhook.signature.alarms', {
      description:
        'Alarms raised because deliveries kept arriving and none verified: the secret probably differs from the registered one.',
      unit: '{alarm}',
    }),
    polls: meter.createCounter('jobhook.reconcile.polls', {
      description: 'Task status polls the reconciler made.',
      unit: '{request}',
    }),
    dispatched: meter.createCounter('jobhook.reconcile.dispatched', {
      description: 'Job outcomes found by polling and handled (their webhook never came).',
      unit: '{event}',
    }),
  };
}

const START_ATTRIBUTES: Attributes = {
  'messaging.system': MESSAGING_SYSTEM,
  'messaging.operation.type': 'process',
  'messaging.operation.name': 'process',
};

/** The span's attributes once the delivery is answered: what the receiver decided, nothing sent. */
function spanAttributes(delivery: ObservedDelivery): Attributes {
  const attributes: Attributes = {
    'http.response.status_code': delivery.status,
    'jobhook.outcome': delivery.outcome,
  };
  if (delivery.deliveryId !== undefined) attributes['messaging.message.id'] = delivery.deliveryId;
  if (delivery.type !== undefined) {
    attributes['messaging.destination.name'] = delivery.type;
    attributes['jobhook.event.type'] = delivery.type;
  }
  if (delivery.dedupe !== undefined) attributes['jobhook.dedupe'] = delivery.dedupe;
  if (delivery.code !== undefined) attributes['jobhook.answer.code'] = delivery.code;
  if (delivery.refusal !== undefined) attributes['jobhook.refusal'] = delivery.refusal;
  if (delivery.outcome === 'failed' && delivery.code !== undefined) attributes['error.type'] = delivery.code;
  return attributes;
}

/** Closed lists but the event type, known once a signature passed: a stranger makes up no series. */
function deliveryAttributes(delivery: ObservedDelivery): Attributes {
  const attributes: Attributes = {
    'messaging.system': MESSAGING_SYSTEM,
    'jobhook.outcome': delivery.outcome,
    'http.response.status_code': delivery.status,
  };
  if (delivery.type !== undefined) attributes['messaging.destination.name'] = delivery.type;
  if (delivery.code !== undefined) attributes['jobhook.answer.code'] = delivery.code;
  if (delivery.refusal !== undefined) attributes['jobhook.refusal'] = delivery.refusal;
  return attributes;
}

function handlerAttributes(delivery: ObservedDelivery): Attributes {
  const attributes: Attributes = {
    'messaging.system': MESSAGING_SYSTEM,
    'jobhook.outcome': delivery.outcome,
  };
  if (delivery.type !== undefined) attributes['messaging.destination.name'] = delivery.type;
  if (delivery.outcome === 'failed' && delivery.code !== undefined) attributes['error.type'] = delivery.code;
  return attributes;
}
