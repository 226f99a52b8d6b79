/**
 * OpenTelemetry for the receiver: a span per delivery and delivery metrics.
 *
 *   import { createReceiver } from 'jobhook';
 *   import { otelObserver } from 'jobhook/otel';
 *
 *   const receiver = createReceiver({ secret, observer: otelObserver() });
 *
 * `@opentelemetry/api` is an optional peer dependency: install it (with the SDK of your choice,
 * registered before deliveries arrive) to use this module. `jobhook` itself never loads it.
 *
 * @module jobhook/otel
 */
export { otelObserver, type OtelObserverOptions } from './observer.js';
