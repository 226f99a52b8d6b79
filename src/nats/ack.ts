import type { JetStreamClient, JsMsg } from '@nats-io/jetstream';
import { backoffDelay, sleep, type Backoff } from '../common/backoff.js';

/** The pauses between tries at a write the server did not confirm (an ack, a done key): 50 ms doubling to 1 s. */
export const RESEND_BACKOFF: Backoff = { firstMs: 50, maxMs: 1000 };

/** What an ack needs from the connection under a JetStream client: a request. */
interface Requester {
  request(subject: string, payload: string, options: { timeout: number }): Promise<unknown>;
  publish(subject: string, payload: string): void;
  isClosed(): boolean;
}

/** The connection and the reply subject under `msg`, when the client keeps both (see below). */
function replyRoute(js: JetStreamClient, msg: JsMsg): { nc: Requester; reply: string } | undefined {
  const nc = (js as { nc?: Requester }).nc;
  const reply = (msg as { reply?: unknown }).reply;
  return nc &&
    typeof nc.request === 'function' &&
    typeof nc.publish === 'function' &&
    typeof reply === 'string' &&
    reply.length > 0
    ? { nc, reply }
    : undefined;
}

/**
 * A function that tells the server the worker is still on `msg` ("+WPI": its ack wait starts
 * again), from the start of a run until its ack is confirmed. `msg.working()` goes silent once
 * an ack was sent, though that ack may be lost and sent again for a while; so this one sends on the
 * reply subject itself. Never throws: a signal that cannot go (the connection closed) is skipped.
 */
export function progressSignal(js: JetStreamClient, msg: JsMsg): () => void {
  const route = replyRoute(js, msg);
  return () => {
    try {
      if (route) {
        if (!route.nc.isClosed()) route.nc.publish(route.reply, '+WPI');
      } else msg.working();
    } catch {
      // The next signal, or the server's redelivery after ack_wait, covers it.
    }
  };
}

/**
 * Acks `msg` and waits for the server to confirm it; when it does not (the ack was lost with a
 * connection the server closed, or reached a server shutting down: "no responders"), sends it
 * again after a pause until one is confirmed or `stopped()`. An ack that never lands costs a
 * second run of the event's handlers once `ack_wait` runs out, by a worker that did not fail; an
 * ack sent twice costs nothing (the server answers an ack of a message it no longer holds too).
 *
 * A `JsMsg` sends one ack at most, so the ack goes again as a request to its reply subject, on the
 * connection the client was made on. @nats-io/jetstream 3 keeps both (`reply`, `nc`) without
 * typing them; were either missing, this acks once, as `ackAck` does.
 */
export async function ackUntilLanded(
  js: JetStreamClient,
  msg: JsMsg,
  options: { tryMs: number; stopped: () => boolean },
): Promise<void> {
  const route = replyRoute(js, msg);
  const resend = route && (() => route.nc.request(route.reply, '+ACK', { timeout: options.tryMs }));
  for (let tries = 1; ; tries++) {
    try {
      await (tries === 1 ? msg.ackAck({ timeout: options.tryMs }) : resend!());
      return;
    } catch (error) {
      if (!route || options.stopped() || route.nc.isClosed()) throw error;
    }
    await sleep(backoffDelay(RESEND_BACKOFF, tries));
  }
}
