// NATS JetStream for the hand-off contract suite: a stream, subject and consumer of this run's
// own on the JetStream at JOBHOOK_NATS_URL, deleted afterwards.
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { QueuedJobRunner } from 'jobhook/extend';
import { natsHandoff } from 'jobhook/nats';
import { NATS_URL, natsAvailable, runTag } from '../support/services.js';
import type { EngineUnderTest } from './contract.js';

// A worker that died is noticed after a second; retries wait 10 ms.
const workerOptions = { ackWaitMs: 1000, backoffMs: [10] };

export async function workerFromEnv(receiver: QueuedJobRunner, env: NodeJS.ProcessEnv) {
  const nc = await connect({ servers: env.NATS_URL! });
  const handoff = natsHandoff({ js: jetstream(nc), stream: env.STREAM!, subject: env.SUBJECT! });
  return handoff.work(receiver, { attempts: Number(env.ATTEMPTS), ...workerOptions });
}

export const nats: EngineUnderTest = {
  name: 'NATS JetStream',
  available: natsAvailable,
  async open({ attempts }) {
    const tag = runTag();
    const stream = `JOBHOOK_${tag}`;
    const subject = `jobhook.${tag}.events`;
    const nc = await connect({ servers: NATS_URL });
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    const handoff = natsHandoff({ js, stream, subject });
    const closing: (() => Promise<unknown>)[] = [
      () => jsm.streams.delete(stream).catch(() => undefined),
      () => jsm.streams.delete(`${stream}_DONE`).catch(() => undefined),
      () => nc.close(),
    ];
    const consumerInfo = () => jsm.consumers.info(stream, 'jobhook-workers').catch(() => undefined);
    return {
      handoff,
      async unreachable() {
        const closed = await connect({ servers: NATS_URL });
        await closed.close(); // the connection is gone: every publish fails
        return natsHandoff({ js: jetstream(closed), stream, subject, timeoutMs: 300 });
      },
      async stored() {
        // A work-queue stream removes what was acked: its last sequence counts what it stored.
        return (await jsm.streams.info(stream)).state.last_seq;
      },
      async pending() {
        const info = await consumerInfo();
        return info
          ? info.num_pending + info.num_ack_pending
          : (await jsm.streams.info(stream)).state.messages;
      },
      startWorker: (receiver) => handoff.work(receiver, { attempts, ...workerOptions }),
      workerEnv: { ENGINE: 'nats', NATS_URL, STREAM: stream, SUBJECT: subject, ATTEMPTS: String(attempts) },
      cliArgs: ['--nats-url', NATS_URL, '--stream', stream, '--subject', subject],
      async cleanup() {
        for (const close of closing) await close();
      },
    };
  },
};
