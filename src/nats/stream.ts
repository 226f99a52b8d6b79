import type { JetStreamClient, JetStreamManager, StreamConfig } from '@nats-io/jetstream';
import { nameMatching, positiveInteger } from '../common/option-checks.js';
import type { HandoffJob } from '../handoff/handoff.js';

/** A stream or consumer name: letters, digits, _ and -. */
export const NATS_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Where the hand-off's events live in JetStream: resolved from the options of both sides. */
export interface NatsPlace {
  stream: string;
  subject: string;
  /** The subject of the failed records (`<subject>.failed`), in the same stream. */
  failedSubject: string;
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

/** Makes sure the stream exists; one that does is used as it is (reported once if its window is shorter). */
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

/** The manager of `stream`, which must exist: a mistyped name is refused (`missing`), not created. */
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

/** A failed record's body (on `<subject>.failed`): the job, with what its last attempt said. */
export interface FailedRecord {
  job: HandoffJob;
  error: string;
  attempts: number;
  failedAt: number;
}

/** The header that carries the attempts a retried event had made. */
export const ATTEMPTS_HEADER = 'Jobhook-Attempts';

/** Keys of events that ran, in `<stream>_DONE`: nats-server forgets acked ids on restart, last acks on a crash. */
export interface DoneKeys {
  has(key: string): Promise<boolean>;
  /** Writes `key`, waiting at most `timeoutMs` for the server's confirmation. */
  add(key: string, timeoutMs: number): Promise<void>;
}

export function doneKeys(js: JetStreamClient, jsm: JetStreamManager, place: NatsPlace): DoneKeys {
  const stream = `${place.stream}_DONE`;
  const subjectOf = (key: string) => `${place.subject}.done.${token(key)}`;
  let ensured: Promise<void> | undefined;
  const ensure = () =>
    (ensured ??= (async () => {
      const exists = await jsm.streams.info(stream).then(
        () => true,
        (error: unknown) => {
          if (isNotFound(error)) return false;
          throw error;
        },
      );
      if (exists) return;
      const window = (await jsm.streams.info(place.stream)).config.duplicate_window;
      const config: Partial<StreamConfig> & { name: string } = {
        name: stream,
        subjects: [`${place.subject}.done.*`],
        retention: 'limits',
        storage: 'file',
        max_age: window || place.duplicateWindowMs * 1_000_000,
        max_msgs_per_subject: 1,
      };
      await jsm.streams.add(config).catch((error: unknown) => {
        // Another worker created it at the same time.
        if (!/already in use|already exists/i.test(String((error as Error)?.message))) throw error;
      });
    })().catch((error: unknown) => {
      ensured = undefined;
      throw error;
    }));

  return {
    async has(key) {
      await ensure();
      const found = await jsm.streams
        .getMessage(stream, { last_by_subj: subjectOf(key) })
        .catch((error: unknown) => {
          if (isNotFound(error)) return null;
          throw error;
        });
      return found !== null && found !== undefined;
    },
    async add(key, timeoutMs) {
      await ensure();
      await js.publish(subjectOf(key), '', { expect: { streamName: stream }, timeout: timeoutMs });
    },
  };
}

/** A key as one subject token: base64url of its UTF-8 bytes (letters, digits, - and _). */
function token(key: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(key)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '') || '_';
}
