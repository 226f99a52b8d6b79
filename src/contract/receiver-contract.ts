/**
 * A sender's contract, as `jobhook probe` writes it (docs/contracts.md): how its deliveries are
 * signed and where its payloads keep what jobhook's events hold.
 */
import type { SecretForm } from '../signatures/secret.js';

/**
 * How a sender signs and shapes its deliveries, as `npx jobhook probe` reports it (its `contract`
 * field; `createReceiver({ contract })` also takes the whole report). Handlers see the usual
 * `JobCompletedEvent` and `JobFailedEvent` whatever the sender's shape. See docs/contracts.md.
 */
export interface ReceiverContract {
  /** The contract's format: 1 (the only one so far). */
  version?: 1;
  /**
   * The signature scheme, as one of jobhook's presets:
   * - `standard-webhooks`: `standardWebhooks({ secretForm })`, Svix's `svix-*` names included;
   * - `hmac-sha256`: the body's HMAC in one header, `hmacSha256({ header, prefix, encoding, secretForm })`;
   * - `stripe`: Stripe's `t=<unix>,v1=<hex>` over `${t}.${body}`, `stripeSignature({ header, secretForm })`;
   * - `unsigned` (no signature found) and `unknown` (a signature no preset checks): refused unless
   *   `dangerouslySkipVerification: true`.
   */
  signature:
    | { scheme: 'standard-webhooks'; secretForm?: SecretForm }
    | {
        scheme: 'hmac-sha256';
        /** The header that carries the digest. */
        header: string;
        /** Text before the digest, such as `sha256=`. Default none. */
        prefix?: string;
        /** Default `hex`. */
        encoding?: 'hex' | 'base64';
        secretForm?: SecretForm;
      }
    | { scheme: 'stripe'; header?: string; secretForm?: SecretForm }
    | { scheme: 'unsigned' | 'unknown' };
  /**
   * Where the sender's payload keeps each value: a dot path into the JSON body (`data.task_id`,
   * `0` for an array's first item), or `header:<name>` for a value a header carries.
   */
  payload: {
    /** The event type (or the status that stands for it), e.g. `type`, `event` or `header:x-event-type`. */
    typePath: string;
    /**
     * The sender's values at `typePath` for a completed and a failed job. Default
     * `{ completed: 'job.completed', failed: 'job.failed' }`; any other value is passed on as the
     * event type (to `onAny` handlers).
     */
    typeValues?: { completed: string; failed: string };
    /** The task id, e.g. `data.task_id`. */
    taskIdPath: string;
    /** The image URL of a completed job, e.g. `data.image_url`. */
    imageUrlPath: string;
    /**
     * The error of a failed job: `{ code, message }`, or a string (the message). Default: `error`
     * beside the task id. Absent from a delivery, the event's error is `{ code: 'unknown', … }`.
     */
    errorPath?: string;
    /**
     * The event's own id, the same on every attempt. `null` or absent: the id is
     * `<type>:<task id>`, stable across retries since one task has one outcome.
     */
    eventIdPath?: string | null;
    /** When the event happened: ISO 8601, or Unix seconds or milliseconds. `null` or absent: when received. */
    createdAtPath?: string | null;
  };
}
