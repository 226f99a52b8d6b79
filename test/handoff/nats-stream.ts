// A JetStream stream and subject of this test's own, on the shared server, removed after the test.
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { NATS_URL, runTag } from '../support/services.js';

/** Connects, names a stream and subject for this run, and queues their clean-up (both streams) in `cleanups`. */
export async function ownNatsStream(cleanups: (() => Promise<unknown>)[]) {
  const tag = runTag();
  const stream = `JOBHOOK_${tag}`;
  const subject = `jobhook.${tag}.events`;
  const nc = await connect({ servers: NATS_URL });
  cleanups.push(() => nc.close());
  const js = jetstream(nc);
  const jsm = await jetstreamManager(nc);
  cleanups.push(() => jsm.streams.delete(stream));
  cleanups.push(() => jsm.streams.delete(`${stream}_DONE`));
  return { js, jsm, stream, subject };
}
