import type { Backoff } from '../common/backoff.js';

/** Where a stored delivery stands: to run, run, given up on after its retries, or refused (with its reason). */
export type InboxStatus = 'pending' | 'handled' | 'failed' | 'refused';

/** A delivery as it came off the wire: what an inbox keeps of it. */
export interface InboxDelivery {
  /** The body's bytes exactly as received: what the signature covers. */
  body: Uint8Array;
  /** The request's headers, names lowercase, the signature's included; never `authorization` or cookies. */
  headers: Record<string, string>;
  /** The request's URL, so that a `secret` function resolves the tenant on replay as it did the first time. */
  url: string | undefined;
  /** When it arrived, in ms since the epoch. */
  receivedAt: number;
  /** The tenant whose secret verified it, with a `secret` function. */
  tenant: string | undefined;
  /** The event type, once known (a delivery refused for its signature has none). */
  type: string | undefined;
  /** The sender's delivery id (`webhook-id`), once verified. */
  deliveryId: string | undefined;
}

/** A delivery in an inbox, with where it stands. */
export interface StoredDelivery extends InboxDelivery {
  /** The inbox's id for it: what `replay({ ids })` and `jobhook inbox show` take. */
  id: string;
  status: InboxStatus;
  /** Why it was refused or failed. */
  reason: string | undefined;
  /** How many times its handlers ran from the inbox. */
  attempts: number;
  /** When a pending delivery may run next (its retry's back-off), in ms since the epoch. */
  dueAt: number;
  /** Marked for replay by {@link Inbox.requeue} (`jobhook inbox replay`): how the receiver runs it next. */
  replay: ReplayMark | undefined;
}

/** A replay asked for from outside the app: `'force'` runs an event handled already past its claim. */
export type ReplayMark = 'replay' | 'force';

/** What became of a leased delivery; `attempts` is its new count. */
export type InboxSettlement =
  | { status: 'handled'; attempts: number }
  | { status: 'failed' | 'refused'; attempts: number; reason: string }
  | { status: 'pending'; attempts: number; dueAt: number; reason?: string | undefined };

/** Which stored deliveries to list or replay; every field narrows. */
export interface InboxFilter {
  ids?: readonly string[];
  /** Arrived at or after, in ms since the epoch (or a Date). */
  since?: number | Date;
  /** Arrived before, in ms since the epoch (or a Date). */
  until?: number | Date;
  status?: InboxStatus;
  tenant?: string;
  type?: string;
  /** At most this many, oldest first. Default 1,000. */
  limit?: number;
}

/** How often a stored delivery's handlers run before it is kept as failed, and the waits between. */
export interface InboxRetry {
  /** Runs in all, the first included. */
  attempts: number;
  backoff: Backoff;
}

/**
 * Where a receiver keeps every delivery it accepts, before it answers, and runs its handlers from
 * (`createReceiver({ inbox })`, docs/inbox.md). `store` resolves only once the delivery is durable;
 * `lease` hands a pending delivery to one owner at a time, for `leaseMs`, so that processes that
 * share the inbox run each once; refused deliveries go to a quarantine bounded by count and bytes.
 */
export interface Inbox {
  /** How long a lease lives, in ms: past it, a delivery whose process died runs elsewhere. */
  readonly leaseMs: number;
  readonly retry: InboxRetry;
  /** Stores a verified delivery as pending, durably; resolves with its id; rejects when it could not. */
  store(delivery: InboxDelivery): Promise<string>;
  /** Keeps a refused delivery with its reason; the oldest refused go first past the quarantine's bounds. */
  quarantine(delivery: InboxDelivery, reason: string): Promise<void>;
  /** Leases up to `limit` pending deliveries that are due and not leased, to `owner`, oldest first. */
  lease(owner: string, limit: number): Promise<StoredDelivery[]>;
  /** Records what became of a delivery; with `owner`, only while that owner holds its lease. */
  settle(id: string, settlement: InboxSettlement, owner?: string): Promise<boolean>;
  /** The stored deliveries the filter picks, oldest first. */
  list(filter?: InboxFilter): Promise<StoredDelivery[]>;
  /**
   * Marks settled deliveries for replay: pending and due now, so that a running receiver on this
   * inbox runs them with `context.source === 'replay'`. Resolves with how many were marked.
   */
  requeue(ids: readonly string[], mark: ReplayMark): Promise<number>;
  /** Deletes what is past its retention or over the size cap (never a pending delivery). */
  prune(): Promise<void>;
}

/** The fields a delivery's row needs besides its bytes, for the stores' SQL. */
export function inboxRow(delivery: InboxDelivery) {
  return {
    headers: JSON.stringify(delivery.headers),
    url: delivery.url ?? null,
    tenant: delivery.tenant ?? null,
    type: delivery.type ?? null,
    deliveryId: delivery.deliveryId ?? null,
  };
}

/** A `since` or `until` in ms since the epoch. */
export function instant(value: number | Date | undefined): number | undefined {
  if (value === undefined) return undefined;
  return value instanceof Date ? value.getTime() : value;
}
