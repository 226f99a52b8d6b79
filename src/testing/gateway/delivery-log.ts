/**
 * What the simulator remembers of each delivery (one event to one webhook, with all its attempts),
 * beyond the attempts themselves: the body it sends, so that the delivery can be sent again, and
 * where it stands, so that a watcher sees the retries still to come.
 */

/** One attempt to deliver one event to one webhook, as the simulator saw it. */
export interface DeliveryAttempt {
  webhookId: number;
  /**
   * The delivery's id (`webhook-id`, or its family's id header): the same on every attempt of one
   * delivery; give it to `redeliver()`.
   */
  deliveryId: string;
  /**
   * The id this attempt carried in its headers: `deliveryId`, but a fresh one on every attempt
   * after the first with `deliveries.idOnRetry: 'new'`.
   */
  sentId: string;
  /** The payload's `id`: the same for every webhook that receives this event. */
  eventId: string;
  type: string;
  taskId: string;
  /** 1 for the first attempt. */
  attempt: number;
  /** Set on the attempts of the second copy of a delivery sent twice (`deliveries.duplicateRate`). */
  duplicate?: true;
  ok: boolean;
  /** The receiver's HTTP status; absent after a connection error or a time-out. */
  status?: number;
  error?: string;
  /** When the attempt started (ISO 8601). */
  at: string;
  /** From sending the request to the end of the answer (or the failure), in milliseconds. */
  durationMs: number;
  /** The first 2,048 bytes of the receiver's answer body, as UTF-8 text; absent without an answer. */
  answer?: string;
  /** Present on the attempts of a delivery sent again with `gateway.redeliver()`. */
  redelivery?: true;
}

/** A delivery the simulator chose never to send (`deliveries.dropRate`): no attempt was made. */
export interface DroppedDelivery {
  webhookId: number;
  deliveryId: string;
  eventId: string;
  type: string;
  taskId: string;
  /** When it would have been sent (ISO 8601). */
  at: string;
}

/**
 * Where a delivery stands. `cancelled`: its webhook was deleted or the simulator closed first;
 * `dropped`: never sent, on purpose (`deliveries.dropRate`).
 */
export type DeliveryState = 'sending' | 'retrying' | 'delivered' | 'failed' | 'cancelled' | 'dropped';

export interface DeliveryRecord {
  /** 1, 2, 3…: tells a redelivery from the delivery it sends again, which share a `webhook-id`. */
  number: number;
  /** The `webhook-id` header of every attempt; a redelivery keeps it (Standard Webhooks: resending). */
  deliveryId: string;
  /** The payload's `id`. */
  eventId: string;
  type: string;
  taskId: string;
  webhookId: number;
  /** The account of the webhook: the console shows each account its own deliveries only. */
  accountId: number;
  /** The exact body every attempt sends. */
  body: string;
  startedAt: string;
  /** True for a delivery sent again with `redeliver()`. */
  redelivery: boolean;
  /** The second copy of a delivery sent twice (`deliveries.duplicateRate`). */
  duplicate?: boolean | undefined;
  state: DeliveryState;
  /** When the next attempt is due, while `retrying`. */
  nextAttemptAt?: string;
  /** This delivery's attempts, oldest first (the same objects as in `gateway.deliveries`). */
  attempts: DeliveryAttempt[];
}

/** The most answer bytes an attempt keeps: enough to read an error, bounded against a hostile receiver. */
export const MAX_ANSWER_BYTES = 2048;

export function deliveryLog() {
  const records: DeliveryRecord[] = [];
  const firsts = new Map<string, DeliveryRecord>();
  return {
    add(record: Omit<DeliveryRecord, 'number' | 'attempts'>): DeliveryRecord {
      const added = { ...record, number: records.length + 1, attempts: [] };
      records.push(added);
      if (!firsts.has(added.deliveryId)) firsts.set(added.deliveryId, added);
      return added;
    },
    /** The first delivery with this `webhook-id` (its redeliveries send the same body). */
    get: (deliveryId: string) => firsts.get(deliveryId),
    /** Every delivery, oldest first. */
    all: (): readonly DeliveryRecord[] => records,
  };
}

export type DeliveryLog = ReturnType<typeof deliveryLog>;
