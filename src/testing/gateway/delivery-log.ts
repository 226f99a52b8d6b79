/**
 * What the simulator remembers of each delivery (one event to one webhook, with all its attempts),
 * beyond the attempts themselves: the body it sends, so that the delivery can be sent again, and
 * where it stands, so that a watcher sees the retries still to come.
 */

/** Where a delivery stands. `cancelled`: its webhook was deleted or the simulator closed first. */
export type DeliveryState = 'sending' | 'retrying' | 'delivered' | 'failed' | 'cancelled';

export interface DeliveryRecord {
  /** The `webhook-id` header of every attempt. */
  deliveryId: string;
  /** The payload's `id`; a redelivery keeps it, so a receiver that dedupes answers a duplicate. */
  eventId: string;
  type: string;
  taskId: string;
  webhookId: number;
  /** The exact body every attempt sends. */
  body: string;
  startedAt: string;
  /** The delivery this one sends again, for a redelivery. */
  redeliveryOf?: string;
  state: DeliveryState;
  /** When the next attempt is due, while `retrying`. */
  nextAttemptAt?: string;
}

/** The most answer bytes an attempt keeps: enough to read an error, bounded against a hostile receiver. */
export const MAX_ANSWER_BYTES = 2048;

export function deliveryLog() {
  const records = new Map<string, DeliveryRecord>();
  return {
    add(record: DeliveryRecord): DeliveryRecord {
      records.set(record.deliveryId, record);
      return record;
    },
    get: (deliveryId: string) => records.get(deliveryId),
    /** Every delivery, oldest first. */
    all: () => [...records.values()],
  };
}

export type DeliveryLog = ReturnType<typeof deliveryLog>;
