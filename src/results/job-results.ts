import { positiveInteger } from '../common/option-checks.js';
import { messageOf, type Logger, ignore } from '../common/logging.js';
import { withGetters } from '../common/structures.js';
import {
  KeptResult,
  resultOf,
  scopedKey,
  type JobResult,
  isResultChannel,
  type ResultChannel,
} from './job-result.js';
import { recentResults } from './recent-results.js';

/** Options of the receiver's `results`; pass a {@link ResultChannel} alone to keep the defaults. */
export interface JobResultsOptions {
  /** Shares results between instances (e.g. `redisResultChannel`). Default: none, this process only. */
  channel?: ResultChannel;
  /** Most results kept for waiters that start late, the latest ones. Default 10,000. */
  maxEntries?: number;
  /** How long a result is kept for a waiter that starts late, in ms. Default 60,000. */
  maxAgeMs?: number;
}

/** The job results a receiver has seen (`receiver.results`), recorded once valid, before handlers run. */
export interface JobResults {
  /** The result of `taskId` of `tenant` (with a `secret` function) if it arrived lately, else undefined. */
  get(taskId: string, tenant?: string): JobResult | undefined;
  /** Calls `listener` once when a result for `taskId` arrives (not one that came before); returns the stop. */
  watch(taskId: string, listener: (result: JobResult) => void, tenant?: string): () => void;
  /** How many watchers are waiting now (for diagnostics and leak tests). */
  readonly watching: number;
  /** While the reconciler polls `taskId`, a promise that settles once that poll is handled, for a wait to join. */
  polling(taskId: string, tenant?: string): Promise<void> | undefined;
}

/** What the receiver holds: the public view plus the feed and the shutdown. */
export interface JobResultsFeed extends JobResults {
  /** Records the result a verified, valid event carries, if any; `at`: when it arrived, if known. */
  receive(type: string, event: unknown, at?: number, tenant?: string): void;
  /** The reconciler is polling `taskId`: {@link JobResults.polling} gives `poll` until it settles. */
  notePoll(taskId: string, tenant: string | undefined, poll: Promise<void>): void;
  close(): Promise<void>;
}

type Listener = (result: JobResult) => void;

/** The receiver's results: a bounded recent store, watchers by task id, and an optional channel. */
export function jobResults(
  option: ResultChannel | JobResultsOptions | false | undefined,
  logger: Logger,
  now: () => number = Date.now,
): JobResultsFeed {
  if (option === false) return disabled();
  const options = isResultChannel(option) ? { channel: option } : option;
  const recent = recentResults({
    maxEntries: positiveInteger('createReceiver', 'results.maxEntries', options?.maxEntries, 10_000),
    maxAgeMs: positiveInteger('createReceiver', 'results.maxAgeMs', options?.maxAgeMs, 60_000, 'ms'),
    now,
  });
  const watchers = new Map<string, Set<Listener>>();
  const polls = new Map<string, Promise<void>>();
  let watching = 0;
  const channel = options?.channel;
  let closed: Promise<void> | undefined;

  function record(kept: KeptResult, at?: number): void {
    recent.add(kept, at);
    if (watchers.size === 0) return;
    const listeners = watchers.get(kept.key);
    if (!listeners) return;
    watchers.delete(kept.key);
    watching -= listeners.size;
    const { result } = kept;
    for (const listener of listeners) {
      try {
        listener(result);
      } catch (error) {
        logger.error(`jobhook: a job result watcher failed: ${messageOf(error)}`);
      }
    }
  }

  if (channel) {
    const onError = (error: unknown) =>
      logger.error(`jobhook: the job result channel failed: ${messageOf(error)}`);
    try {
      const subscribed = channel.subscribe((result) => record(KeptResult.of(result)), onError);
      if (subscribed !== undefined) Promise.resolve(subscribed).catch(onError);
    } catch (error) {
      onError(error);
    }
  }

  const feed: Omit<JobResultsFeed, 'watching'> = {
    get: (taskId, tenant) => recent.get(scopedKey(tenant, taskId)),
    watch(taskId, listener, tenant) {
      const key = scopedKey(tenant, taskId);
      let listeners = watchers.get(key);
      if (!listeners) watchers.set(key, (listeners = new Set()));
      // Its own entry, so one caller's stop never removes another's listener.
      const entry: Listener = (result) => listener(result);
      listeners.add(entry);
      watching++;
      return () => {
        const current = watchers.get(key);
        if (!current?.delete(entry)) return;
        watching--;
        if (current.size === 0) watchers.delete(key);
      };
    },
    polling: (taskId, tenant) => polls.get(scopedKey(tenant, taskId)),
    notePoll(taskId, tenant, poll) {
      const key = scopedKey(tenant, taskId);
      const settled = poll.then(ignore, ignore);
      polls.set(key, settled);
      void settled.then(() => {
        if (polls.get(key) === settled) polls.delete(key);
      });
    },
    receive(type, event, at = now(), tenant) {
      const kept = resultOf(type, event, at, tenant);
      if (!kept) return;
      record(kept, at);
      if (!channel) return;
      try {
        const published = channel.publish(kept.result);
        if (published !== undefined) Promise.resolve(published).catch(publishFailed);
      } catch (error) {
        publishFailed(error);
      }
    },
    close() {
      closed ??= (async () => {
        await channel?.close?.();
      })();
      return closed;
    },
  };
  return withGetters(feed, { watching: () => watching });

  function publishFailed(error: unknown) {
    logger.error(`jobhook: could not publish a job result to the channel: ${messageOf(error)}`);
  }
}

/** `results: false`: nothing is kept, watchers are never called (waiters rely on polling). */
function disabled(): JobResultsFeed {
  return {
    get: () => undefined,
    watch: () => () => undefined,
    watching: 0,
    polling: () => undefined,
    notePoll: () => undefined,
    receive: () => undefined,
    close: () => Promise.resolve(),
  };
}
