import { backoffDelay, sleep } from '../common/backoff.js';
import { JobhookError } from '../common/errors.js';
import { isRecord } from '../common/values.js';
import { checkOption, optionNames, refuseUnknownOptions } from '../common/option-checks.js';
import { messageOf, type SafeLogger } from '../common/logging.js';
import type { EventOutcome } from '../events/event-types.js';
import type {
  Inbox,
  InboxDelivery,
  InboxFilter,
  InboxSettlement,
  InboxStatus,
  StoredDelivery,
} from '../inbox/inbox.js';
import { answers, type ReceiverResponse } from '../wire/answers.js';
import type { ReportFailures } from './failures.js';
import type { InFlight } from './in-flight.js';
import type { DeliveryInput } from './types.js';
import type { ReplayedDelivery, ReplayOptions, ReplayReport } from './replay.js';

/** How the stored door runs one delivery: as the webhook it was, or as a replay. */
export interface StoredRun {
  source: 'webhook' | 'replay';
  /** 1 for the first run, counting on for retries (`context.attempt`). */
  attempt: number;
  /** Run even if the event was handled (no dedupe claim). */
  force?: boolean;
}

/** What became of a stored delivery run through the pipeline, and the answer a sender would have had. */
export interface StoredRunResult {
  outcome: EventOutcome;
  answer: ReceiverResponse;
}

/** What the webhook door asks of the inbox. */
export interface InboxDoor {
  /** Stores a verified, valid delivery: 200 once it is durable, 503 `inbox_failed` when it could not be. */
  accept(delivery: InboxDelivery): Promise<ReceiverResponse>;
  /** Keeps a refused delivery in the quarantine, in the background; never throws. */
  refused(delivery: InboxDelivery, reason: string): void;
}

interface InboxDoorDeps {
  inbox: Inbox;
  logger: SafeLogger;
  report: ReportFailures;
  lifecycle: InFlight;
  /** The pipeline's stored door (made after this door: the pipeline takes the door). */
  handleStored(input: DeliveryInput, run: StoredRun): Promise<StoredRunResult>;
  /** Whether the receiver has any handler yet: nothing runs from the inbox before one is added. */
  hasHandlers(): boolean;
}

/** Deliveries run from the inbox at once, per process. */
const CONCURRENCY = 8;
/** Bytes of refused deliveries waiting to be written; past it more are dropped, so a flood cannot queue up in memory. */
const QUARANTINE_IN_FLIGHT_BYTES = 16 * 1024 * 1024;
const PRUNE_EVERY_MS = 60_000;

/**
 * The inbox's side of a receiver: stores each verified delivery before its 2xx, keeps refused ones,
 * runs the stored deliveries through the pipeline's stored door (leased, so that processes sharing
 * the inbox run each once; failures retried with the one back-off), and replays.
 */
export function inboxDoor(deps: InboxDoorDeps) {
  const { inbox, logger, lifecycle } = deps;
  const owner = globalThis.crypto.randomUUID();
  const stopping = new AbortController();
  let running = 0;
  let pumping = false;
  let again = false;
  let quarantining = 0;
  let warnedQuarantine = false;
  let failingSince: number | undefined;
  // A few ms between checks for due retries, up to a second, after the retry's first wait.
  const tickMs = Math.min(1000, Math.max(20, inbox.retry.backoff.firstMs));

  function storeFailed(error: unknown, delivery: InboxDelivery): ReceiverResponse {
    const failure =
      error instanceof JobhookError && error.code === 'inbox_failed'
        ? error
        : new JobhookError('inbox_failed', `The delivery could not be stored: ${messageOf(error)}`, {
            cause: error,
          });
    deps.report([failure], {
      deliveryId: delivery.deliveryId,
      type: delivery.type ?? '',
      tenant: delivery.tenant,
    });
    return answers.inboxFailed();
  }

  async function accept(delivery: InboxDelivery): Promise<ReceiverResponse> {
    try {
      await inbox.store(delivery);
    } catch (error) {
      return storeFailed(error, delivery);
    }
    pump();
    return answers.ok();
  }

  function refused(delivery: InboxDelivery, reason: string): void {
    const size = delivery.body.byteLength;
    if (quarantining + size > QUARANTINE_IN_FLIGHT_BYTES) return;
    quarantining += size;
    // Called on the next microtask: an inbox that throws at once is a failed write like any other.
    const kept = Promise.resolve().then(() => inbox.quarantine(delivery, reason));
    lifecycle.track(
      kept.then(
        () => {
          quarantining -= size;
        },
        (error: unknown) => {
          quarantining -= size;
          if (!warnedQuarantine) {
            logger.warn(`jobhook: a refused delivery could not be kept in the inbox: ${messageOf(error)}`);
          }
          warnedQuarantine = true;
        },
      ),
    );
  }

  /** Leases what is due while fewer than CONCURRENCY run; called again whenever one ends. */
  function pump(): void {
    if (pumping) {
      again = true;
      return;
    }
    if (lifecycle.closing || stopping.signal.aborted || !deps.hasHandlers()) return;
    pumping = true;
    lifecycle.track(leaseAndRun().finally(() => (pumping = false)));
  }

  async function leaseAndRun(): Promise<void> {
    do {
      again = false;
      while (running < CONCURRENCY && !lifecycle.closing) {
        let rows: StoredDelivery[];
        try {
          rows = await inbox.lease(owner, CONCURRENCY - running);
          failingSince = undefined;
        } catch (error) {
          leaseFailed(error);
          return;
        }
        if (rows.length === 0) break;
        for (const row of rows) {
          running++;
          lifecycle.track(
            runOne(row).finally(() => {
              running--;
              pump();
            }),
          );
        }
      }
    } while (again && !lifecycle.closing);
  }

  function leaseFailed(error: unknown): void {
    // Said once per outage; the next tick tries again.
    if (failingSince === undefined) {
      logger.error(`jobhook: the inbox could not be read; stored deliveries wait: ${messageOf(error)}`);
    }
    failingSince ??= Date.now();
  }

  async function runOne(row: StoredDelivery): Promise<void> {
    const attempt = row.attempts + 1;
    // Marked for replay from outside the app (`jobhook inbox replay`): run as receiver.replay() would.
    const source = row.replay ? 'replay' : 'webhook';
    const result = await deps.handleStored(inputOf(row), { source, attempt, force: row.replay === 'force' });
    const settlement = settlementOf(result, row, attempt);
    try {
      await inbox.settle(row.id, settlement, owner);
    } catch (error) {
      // Its lease lapses and it runs again, a duplicate of itself if it was handled.
      logger.error(`jobhook: the inbox could not record delivery ${row.id}: ${messageOf(error)}`);
    }
  }

  function settlementOf(result: StoredRunResult, row: StoredDelivery, attempt: number): InboxSettlement {
    const { outcome, answer } = result;
    if (outcome === 'handled' || outcome === 'duplicate') return { status: 'handled', attempts: attempt };
    const reason = reasonOf(answer);
    if (outcome === 'invalid') return { status: 'refused', attempts: attempt, reason };
    if (codeOf(answer) === 'shutting_down') {
      return { status: 'pending', attempts: row.attempts, dueAt: Date.now(), reason: row.reason };
    }
    const { retry } = inbox;
    if (attempt >= retry.attempts) return { status: 'failed', attempts: attempt, reason };
    return {
      status: 'pending',
      attempts: attempt,
      dueAt: Date.now() + backoffDelay(retry.backoff, attempt),
      reason,
    };
  }

  /** Checks for due retries and lapsed leases every tick, and prunes once a minute, until stopped. */
  async function tick(): Promise<void> {
    let lastPrune = 0;
    // The first pass waits a turn: handlers are added just after createReceiver() returns.
    for (;;) {
      try {
        await sleep(lastPrune === 0 ? 0 : tickMs, stopping.signal);
      } catch {
        return;
      }
      if (Date.now() - lastPrune >= PRUNE_EVERY_MS) {
        lastPrune = Date.now();
        await inbox.prune().catch((error: unknown) => {
          logger.warn(`jobhook: the inbox could not be pruned: ${messageOf(error)}`);
        });
      }
      pump();
    }
  }

  async function replay(options: ReplayOptions = {}): Promise<ReplayReport> {
    checkOption('receiver.replay', 'options', options, isRecord(options), 'an object');
    refuseUnknownOptions(options, REPLAY_OPTIONS, 'receiver.replay');
    const { force, ...filter } = options;
    checkOption(
      'receiver.replay',
      'force',
      force,
      force === undefined || typeof force === 'boolean',
      'a boolean',
    );
    if ((filter.status as InboxStatus | undefined) === 'pending') {
      throw new JobhookError(
        'invalid_options',
        'receiver.replay: `status` must be "refused", "failed" or "handled": pending deliveries run by themselves.',
      );
    }
    const rows = (await inbox.list(filter as InboxFilter)).filter((row) => row.status !== 'pending');
    const report: ReplayReport = { deliveries: [], handled: 0, duplicate: 0, refused: 0, failed: 0, busy: 0 };
    for (const row of rows) {
      const result = await deps.handleStored(inputOf(row), {
        source: 'replay',
        attempt: 1,
        force: force === true,
      });
      const outcome = result.outcome === 'invalid' ? 'refused' : result.outcome;
      const reason = outcome === 'handled' || outcome === 'duplicate' ? undefined : reasonOf(result.answer);
      report[outcome]++;
      report.deliveries.push({ id: row.id, type: row.type, deliveryId: row.deliveryId, outcome, reason });
      await recordReplay(row, outcome, reason);
    }
    return report;
  }

  /** A replay that ran settles its delivery; one that was refused leaves it as it was. */
  async function recordReplay(row: StoredDelivery, outcome: ReplayedDelivery['outcome'], reason?: string) {
    let settlement: InboxSettlement | undefined;
    if (outcome === 'handled' || (outcome === 'duplicate' && row.status !== 'handled')) {
      settlement = { status: 'handled', attempts: row.attempts + 1 };
    } else if (outcome === 'failed') {
      settlement = { status: 'failed', attempts: row.attempts + 1, reason: reason ?? 'failed on replay' };
    }
    if (settlement) await inbox.settle(row.id, settlement);
  }

  return {
    accept,
    refused,
    replay,
    /** Runs what was stored and not yet handled, then keeps checking. */
    start() {
      void tick();
    },
    stop() {
      stopping.abort();
    },
  };
}

const REPLAY_OPTIONS = optionNames<ReplayOptions>()([
  'ids',
  'since',
  'until',
  'status',
  'tenant',
  'type',
  'force',
  'limit',
]);

/** A stored delivery as the pipeline takes a delivery off the wire. */
function inputOf(row: StoredDelivery): DeliveryInput {
  return { method: 'POST', headers: row.headers, body: row.body, url: row.url };
}

function codeOf(answer: ReceiverResponse): string | undefined {
  try {
    const code = (JSON.parse(answer.body) as { error?: { code?: unknown } }).error?.code;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

/** An answer as a reason: its status, code and message (jobhook's own text, never a secret). */
function reasonOf(answer: ReceiverResponse): string {
  try {
    const { error } = JSON.parse(answer.body) as { error?: { code?: unknown; message?: unknown } };
    return `${answer.status} ${String(error?.code)}: ${String(error?.message)}`;
  } catch {
    return String(answer.status);
  }
}
