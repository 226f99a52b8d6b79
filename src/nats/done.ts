import type { JetStreamClient, JetStreamManager, StreamConfig } from '@nats-io/jetstream';
import { isNotFound, type NatsPlace } from './stream.js';

/**
 * The keys of events whose handlers succeeded, kept for the duplicate window in a stream of their
 * own (`<stream>_DONE`, limits retention, `max_age` = the events stream's duplicate window, one
 * message per key).
 *
 * Why: the events stream is a work queue, so an event is deleted once acked, and nats-server
 * rebuilds its duplicate window at start from the messages it holds: after a restart it forgets
 * the ids of events that ran, and a later delivery of one is stored and delivered again. And a
 * nats-server that crashes forgets acks it confirmed in its last moments, delivering those events
 * again. A worker looks the key up before it runs an event and acks it unrun when it is done; a
 * key is written (and confirmed: JetStream writes a message before it confirms it, also across a
 * SIGKILL) before the event is acked.
 */
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
      // As long as the events stream's duplicate window, whoever created it and with what window.
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
