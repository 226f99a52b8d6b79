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
