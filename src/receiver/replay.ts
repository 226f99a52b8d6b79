import type { InboxStatus } from '../inbox/inbox.js';

/** Options of `receiver.replay()`: which stored deliveries, and whether to run handled events again. */
export interface ReplayOptions {
  /** The inbox ids to replay (`jobhook inbox list` shows them). */
  ids?: readonly string[];
  /** Arrived at or after (ms since the epoch, or a Date). */
  since?: number | Date;
  /** Arrived before (ms since the epoch, or a Date). */
  until?: number | Date;
  /** Only deliveries that were refused, failed or handled. Default: all three. */
  status?: Exclude<InboxStatus, 'pending'>;
  tenant?: string;
  type?: string;
  /** Run the handlers of an event handled already, past its dedupe claim. Default `false`. */
  force?: boolean;
  /** At most this many, oldest first. Default 1,000. */
  limit?: number;
}

/** What a replay did to one stored delivery. */
export interface ReplayedDelivery {
  id: string;
  type: string | undefined;
  deliveryId: string | undefined;
  /** `refused`: its bytes no longer verify, or its payload no longer passes (see `reason`); it did not run. */
  outcome: 'handled' | 'duplicate' | 'refused' | 'failed' | 'busy';
  reason: string | undefined;
}

/** What `receiver.replay()` resolves to: each delivery's outcome, and the counts. */
export interface ReplayReport {
  deliveries: ReplayedDelivery[];
  handled: number;
  duplicate: number;
  refused: number;
  failed: number;
  busy: number;
}
