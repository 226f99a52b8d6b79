import { JobhookError } from '../common/errors.js';
import { checkOption, MS_OR_NONE, nonNegativeNumber } from '../common/option-checks.js';
import { defaultSchemas, type EventMapOf, type EventSchemas, type MergedSchemas } from '../events/schemas.js';
import { jobResults } from '../results/job-results.js';
import { createFetchHandler } from '../wire/fetch-handler.js';
import { GATEWAY_EVENT_TYPES } from '../events/event-types.js';
import { failureReporter } from './failures.js';
import { inFlightTracker } from './in-flight.js';
import { resolveOptions, type ReceiverOptions, type ResolvedOptions } from './options.js';
import { createPipeline, type Pipeline } from './pipeline.js';
import { inboxDoor } from './inbox-door.js';
import { registerReceiver } from './register.js';
import { keepOwnHandoff } from '../handoff/handoff.js';
import { alarmWitness } from './alarm-witness.js';
import { MOUNT_CHECK_AFTER_MS, mountCheck } from './mount-check.js';
import type { DeliveryContext, EventHandler } from './run-handlers.js';
import { createReconciler, type Reconciler } from '../reconcile/reconciler.js';
import { createConfirmer } from './confirm.js';
import type { CloseOptions, ErrorHandler, EventMap, Receiver } from './types.js';

// `& EventMap` only tells the compiler the job events always exist; it changes no field type.
type Events<S extends EventSchemas> = EventMapOf<MergedSchemas<S>> & EventMap;

/**
 * Creates a receiver: the handler registry and the public object. What happens to a delivery is
 * in pipeline.ts, step by step. Throws a `JobhookError` for a missing secret or invalid options.
 */
export function createReceiver<const S extends EventSchemas = Record<never, never>>(
  options: ReceiverOptions<S>,
): Receiver<Events<S>> {
  type E = Events<S>;
  const config = resolveOptions(options);
  const schemas: EventSchemas = { ...defaultSchemas, ...options.schemas };
  const handlersByType = new Map<string, readonly EventHandler<unknown>[]>();
  // Handler lists are replaced, never changed in place, so a delivery can run one as it is while
  // a handler is added meanwhile.
  let anyHandlers: readonly EventHandler<unknown>[] = [];
  const errorHandlers: ErrorHandler[] = [];
  const lifecycle = inFlightTracker();
  // Results cross instances only over a channel passed as `results`: no store opens one by itself.
  const results = jobResults(options.results, config.logger, config.now);
  const report = failureReporter(errorHandlers, config.redact, config.logger, lifecycle);

  /** The handlers of a type: its own (for a type with a schema), then the `onAny` ones. */
  function handlersFor(type: string, known: boolean): readonly EventHandler<unknown>[] {
    const typed = known ? handlersByType.get(type) : undefined;
    // The lists are never changed in place: one alone is passed as it is, not copied.
    return typed && anyHandlers.length > 0 ? [...typed, ...anyHandlers] : (typed ?? anyHandlers);
  }

  // With `reconcile`: polled outcomes enter the pipeline by its poll door, and a webhook's outcome
  // tells the tracker its task needs no poll.
  let reconciler: Reconciler | undefined;
  const door =
    config.inbox &&
    inboxDoor({
      inbox: config.inbox,
      logger: config.logger,
      report,
      lifecycle,
      handleStored: (input, run) => pipeline.handleStored(input, run),
      hasHandlers: () => handlersByType.size > 0 || anyHandlers.length > 0,
    });
  const confirmer =
    config.confirm &&
    createConfirmer({
      options: config.confirm,
      reconcileJobs: config.reconcile?.jobs,
      results,
      report,
      logger: config.logger,
      now: config.now,
    });
  const witness = alarmWitness();
  const mount = mountCheck(config.logger);
  const pipeline: Pipeline = createPipeline({
    inbox: door,
    config,
    witness,
    schemas,
    handlersFor,
    results,
    report,
    lifecycle,
    confirm: confirmer,
    webhookSettled:
      config.reconcile &&
      ((taskId, tenant) => {
        if (reconciler) lifecycle.track(reconciler.settled(taskId, tenant));
      }),
  });
  if (config.reconcile) {
    reconciler = createReconciler({
      options: config.reconcile,
      logger: config.logger,
      observer: config.observer,
      now: config.now,
      dispatch: async (polled) => {
        const outcome = await pipeline.handlePolled(polled);
        if (outcome === 'handled' || outcome === 'duplicate')
          confirmer?.handled(polled.taskId, polled.tenant);
        return outcome;
      },
      polling: (taskId, tenant, poll) => results.notePoll(taskId, tenant, poll),
      lookup: confirmer?.lookup,
      handled: confirmer?.isHandled,
    });
  }

  warnOfMemoryStore(options, config);
  warnOfInboxWithMemoryStore(options, config);
  door?.start();

  function addHandler(type: string, handler: EventHandler<never>, where = 'receiver.on') {
    assertFunction(where, handler);
    handlersByType.set(type, [...(handlersByType.get(type) ?? []), handler as EventHandler<unknown>]);
    return receiver;
  }

  async function close(closeOptions: CloseOptions = {}): Promise<void> {
    const timeoutMs = closeTimeoutOf(closeOptions);
    // Closing from this very call on: a delivery that comes while the reconciler stops gets 503
    // (awaiting the reconciler first let one in and run its handlers during close()).
    const draining = lifecycle.close(timeoutMs);
    mount.stop();
    door?.stop();
    // No new pass, no poll in flight; a polled outcome being handled is drained with the rest.
    await reconciler?.close();
    const drained = await draining;
    await results.close();
    if (!drained) {
      config.logger.error(
        `jobhook: close() stopped waiting after ${timeoutMs} ms with ${lifecycle.pending} ` +
          'deliveries or handlers still running; their claims lapse with the lease and the sender retries them.',
      );
    }
  }

  const receiver: Receiver<E> = {
    onJobCompleted: (handler) => addHandler('job.completed', handler, 'receiver.onJobCompleted'),
    onJobFailed: (handler) => addHandler('job.failed', handler, 'receiver.onJobFailed'),
    on: (type, handler) => addHandler(type, handler),
    onAny(handler) {
      assertFunction('receiver.onAny', handler);
      anyHandlers = [...anyHandlers, handler as EventHandler<unknown>];
      return receiver;
    },
    onError(handler) {
      assertFunction('receiver.onError', handler);
      errorHandlers.push(handler);
      return receiver;
    },
    receive: pipeline.receive,
    fetch: createFetchHandler(pipeline.receive),
    handleQueued: pipeline.handleQueued,
    work(workOptions) {
      const { handoff } = config;
      if (typeof handoff?.work !== 'function') {
        return Promise.reject(
          new JobhookError(
            'invalid_options',
            handoff
              ? 'receiver.work(): this hand-off cannot start a worker (it has no work() method); run your own consumer and call receiver.handleQueued(job).'
              : 'receiver.work() needs createReceiver({ handoff }), e.g. bullmqHandoff({ queue }).',
          ),
        );
      }
      return handoff.work(receiver, workOptions);
    },
    close,
    replay(replayOptions) {
      if (!door) {
        return Promise.reject(
          new JobhookError(
            'invalid_options',
            'replay() needs createReceiver({ inbox }), e.g. sqliteInbox({ path }).',
          ),
        );
      }
      return door.replay(replayOptions);
    },
    reconcileOnce() {
      if (!reconciler) {
        return Promise.reject(
          new JobhookError(
            'invalid_options',
            'reconcileOnce() needs createReceiver({ reconcile: { client, jobs } }).',
          ),
        );
      }
      return reconciler.reconcileOnce();
    },
    maxBodyBytes: config.maxBodyBytes,
    results,
    register: ({ checkMountAfterMs, ...registerOptions }) => {
      const afterMs = nonNegativeNumber(
        'receiver.register',
        'checkMountAfterMs',
        checkMountAfterMs,
        MOUNT_CHECK_AFTER_MS,
        {
          unit: MS_OR_NONE,
        },
      );
      // The webhook whose delivery counters the reconciler reads.
      const url = (registerOptions as { url?: unknown } | undefined)?.url;
      if (typeof url === 'string') reconciler?.watchUrl(url);
      const registered = registerReceiver(
        {
          secret: config.lookup ? undefined : config.secrets[0],
          picksSecrets: config.lookup !== undefined,
          // A wait on a task must learn of its failure as of its success: with results kept, both
          // job outcomes are subscribed to, whichever the handlers are for.
          handled: [
            ...(anyHandlers.length > 0 ? Object.keys(schemas) : handlersByType.keys()),
            ...(options.results === false ? [] : GATEWAY_EVENT_TYPES),
          ].filter((type, at, all) => all.indexOf(type) === at),
          known: Object.keys(schemas),
        },
        // `checkMountAfterMs` is the receiver's own: the rest are the client's options.
        registerOptions as typeof registerOptions & { client: never },
      );
      // The webhook's counters, read once registered, tell the gateway's refused deliveries from a stranger's.
      const client = (registerOptions as { client?: unknown } | undefined)?.client;
      if (typeof url !== 'string') return registered;
      return (registered as Promise<unknown>).then(async (result: unknown) => {
        await witness.watch(client, url);
        void mount.start(client, url, afterMs);
        return result;
      }) as typeof registered;
    },
  };
  if (config.handoff) keepOwnHandoff(receiver, config.handoff);
  return receiver;
}

/**
 * Whether this process is a node:cluster or pm2 cluster worker. Through `getBuiltinModule`: the
 * core imports nothing of Node's; and never throwing, as Deno does on an environment read it was
 * not allowed.
 */
function inClusterWorker(): boolean {
  try {
    const host = (globalThis as { process?: NodeLikeProcess }).process;
    const cluster = host?.getBuiltinModule?.('node:cluster') as { isWorker?: boolean } | undefined;
    return cluster?.isWorker === true || host?.env?.exec_mode === 'cluster_mode';
  } catch {
    return false;
  }
}

interface NodeLikeProcess {
  env?: Record<string, string | undefined>;
  getBuiltinModule?: (name: string) => unknown;
}

/**
 * The default memory store forgets with its process: said once, when the receiver is made, in a
 * cluster worker (a retry that reaches another process runs again) or under NODE_ENV=production
 * (a retry after a restart or a deploy runs again).
 */
function warnOfMemoryStore(options: ReceiverOptions<EventSchemas>, config: ResolvedOptions): void {
  if (options.dedupe !== undefined || !config.dedupe) return;
  if (inClusterWorker()) {
    config.logger.warn(
      'jobhook: this receiver runs in a cluster worker with the in-memory dedupe store: each process has its own, ' +
        'so a delivery retried to another process runs its handlers again. Share a store between them: ' +
        'sqliteDedupeStore (jobhook/sqlite) for the processes of one machine, ' +
        'redisDedupeStore (jobhook/redis) or postgresDedupeStore (jobhook/postgres) for several machines.',
    );
  } else if (inProduction()) {
    config.logger.warn(
      'jobhook: this receiver keeps what it handled in memory (the default dedupe store), which it forgets on ' +
        'restart: a delivery handled before a restart or a deploy runs its handlers again when the gateway retries it. ' +
        "Keep it in a file with sqliteDedupeStore({ path: './jobhook.db' }) from jobhook/sqlite " +
        '(or share redisDedupeStore or postgresDedupeStore between machines).',
    );
  }
}

/** NODE_ENV=production, read as inClusterWorker reads the environment. */
function inProduction(): boolean {
  try {
    return (globalThis as { process?: NodeLikeProcess }).process?.env?.NODE_ENV === 'production';
  } catch {
    return false;
  }
}

/** An inbox runs each event once through the dedupe claim: one that forgets on restart lets a retry run again. */
function warnOfInboxWithMemoryStore(options: ReceiverOptions<EventSchemas>, config: ResolvedOptions): void {
  if (!config.inbox || options.dedupe !== undefined) return;
  config.logger.warn(
    'jobhook: this receiver has an inbox but the in-memory dedupe store, which forgets on restart: a retried ' +
      'delivery of an event handled before a restart runs again. Pass a durable one beside the inbox: ' +
      'sqliteDedupeStore (jobhook/sqlite) or postgresDedupeStore (jobhook/postgres).',
  );
}

/** `close({ timeoutMs })`: a number of at least 0 (0 waits without a bound), default 30 s. */
function closeTimeoutOf(options: CloseOptions): number {
  const given: unknown = options?.timeoutMs;
  return nonNegativeNumber('receiver.close', 'timeoutMs', given, 30_000, {
    infinite: true,
    unit: MS_OR_NONE,
  });
}

function assertFunction(where: string, handler: unknown): void {
  checkOption(where, 'handler', handler, typeof handler === 'function', 'a function');
}

export type { DeliveryContext, EventHandler };
