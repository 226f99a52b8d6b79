import type { JetStreamClient, JetStreamManager, StreamConfig } from '@nats-io/jetstream';
import { nameMatching, positiveInteger } from '../common/errors.js';

/** A stream or consumer name: letters, digits, _ and -. */
export const NATS_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Where the hand-off's events live in JetStream: resolved from the options of both sides. */
export interface NatsPlace {
  stream: string;
  /** The subject events are published on. */
  subject: string;
  /** The subject of the failed records (`<subject>.failed`), in the same stream. */
  failedSubject: string;
  /** The duplicate window of a stream the hand-off creates, in ms. */
  duplicateWindowMs: number;
}

const HOUR = 60 * 60 * 1000;

/** Checks and resolves `stream`, `subject` and `duplicateWindowMs`. */
export function natsPlace(
  caller: string,
  options: { stream?: string; subject?: string; duplicateWindowMs?: number },
): NatsPlace {
  const stream = nameMatching(
    caller,
    'stream',
    options.stream,
    'JOBHOOK',
    NATS_NAME,
    'a JetStream stream name (letters, digits, _ -)',
  );
  const subject = nameMatching(
    caller,
    'subject',
    options.subject,
    'jobhook.events',
    /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/,
    'a NATS subject without wildcards',
  );
  const duplicateWindowMs = positiveInteger(
    caller,
    'duplicateWindowMs',
    options.duplicateWindowMs,
    72 * HOUR,
    'ms',
  );
  return { stream, subject, failedSubject: `${subject}.failed`, duplicateWindowMs };
}

/**
 * Makes sure the stream exists: a work-queue stream on file storage over the events subject and
 * the failed subject, deduplicating by `Nats-Msg-Id` over `duplicateWindowMs`. A stream that
 * exists already is used as it is (yours to configure); one whose duplicate window is shorter is
 * reported once, since events delivered again after that window would run again.
 */
export function streamEnsurer(js: JetStreamClient, place: NatsPlace, warn: (line: string) => void) {
  let ensured: Promise<JetStreamManager> | undefined;
  return () =>
    (ensured ??= (async () => {
      const jsm = await js.jetstreamManager();
      const info = await jsm.streams.info(place.stream).catch((error: unknown) => {
        if (isNotFound(error)) return undefined;
        throw error;
      });
      if (!info) {
        const config: Partial<StreamConfig> & { name: string } = {
          name: place.stream,
          subjects: [place.subject, place.failedSubject],
          retention: 'workqueue',
          storage: 'file',
          duplicate_window: place.duplicateWindowMs * 1_000_000,
        };
        await jsm.streams.add(config).catch((error: unknown) => {
          // Another process created it at the same time.
          if (!/already in use|already exists/i.test(String((error as Error)?.message))) throw error;
        });
      } else if (info.config.duplicate_window < place.duplicateWindowMs * 1_000_000) {
        warn(
          `jobhook: the JetStream stream ${place.stream} deduplicates over ${Math.round(info.config.duplicate_window / 1e9)} s, ` +
            `less than duplicateWindowMs (${place.duplicateWindowMs / 1000} s): an event delivered again after that runs again.`,
        );
      }
      return jsm;
    })().catch((error: unknown) => {
      ensured = undefined;
      throw error;
    }));
}

/**
 * The manager of `stream`, which must exist: listing, retrying and a worker given no hand-off
 * refuse a stream that is not there rather than create it (a mistyped or default name would make
 * a stream nothing publishes to, or take another app's). `missing` is the refusal.
 */
export async function existingStream(
  js: JetStreamClient,
  stream: string,
  missing: () => Error,
): Promise<JetStreamManager> {
  const jsm = await js.jetstreamManager();
  await jsm.streams.info(stream).catch((error: unknown) => {
    if (!isNotFound(error)) throw error;
    throw missing();
  });
  return jsm;
}

/** JetStream's "not found" answers (stream, consumer, message). */
export function isNotFound(error: unknown): boolean {
  const message = String((error as Error)?.message ?? '');
  const code = (error as { code?: unknown; api_error?: { code?: number } })?.api_error?.code;
  return code === 404 || /not found/i.test(message);
}
