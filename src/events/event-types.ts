/**
 * The event types the gateway delivers, and the only list of them: the schemas, the client's
 * types, registration, the CLI and the gateway simulator all read it. Kept apart from the schemas
 * so that code which needs the names does not load zod.
 */
export const GATEWAY_EVENT_TYPES = ['job.completed', 'job.failed'] as const;

/** An event type the gateway delivers. */
export type GatewayEventType = (typeof GATEWAY_EVENT_TYPES)[number];

/** Whether `type` is one the gateway delivers. */
export function isGatewayEventType(type: unknown): type is GatewayEventType {
  return (GATEWAY_EVENT_TYPES as readonly unknown[]).includes(type);
}

/**
 * What became of an event, whichever way it reached the handlers (a webhook, a poll of the
 * gateway, a queue): `handled` (its handlers succeeded, it had none, or it was handed off to a
 * queue), `duplicate` (handled before), `busy` (being handled right now, maybe by another
 * instance), `failed` (a handler failed or timed out, or a store or the hand-off failed: it runs
 * again on retry), `invalid` (refused for good: bad JSON, or a payload its schema refuses).
 */
export type EventOutcome = 'handled' | 'duplicate' | 'busy' | 'failed' | 'invalid';
