// Runs each example the way its header says (`tsx examples/<name>/server.ts`) in a child process,
// and sends it a signed delivery: the direct-run branch and its environment variables work.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { signDelivery } from 'jobhook/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { completed, SECRET } from '../adapters/fixtures.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
/** A child process compiles the example with tsx first: bounded to end a hang, not to time it. */
const CHILD_TIMEOUT_MS = 120_000;

/** Resolves with the first match of `pattern` in the child's output so far or to come. */
function waitForOutput(child: ChildProcessWithoutNullStreams, pattern: RegExp): Promise<RegExpMatchArray> {
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (data: Buffer) => {
      output += data.toString('utf8');
      const match = pattern.exec(output);
      if (match) {
        child.stdout.off('data', onData);
        resolve(match);
      }
    };
    child.stdout.on('data', onData);
    child.once('exit', (code) =>
      reject(new Error(`the example exited (${code}) before printing ${pattern}: ${output}`)),
    );
  });
}

describe.each(['express', 'hono', 'node'])('examples/%s run directly', (name) => {
  let child: ChildProcessWithoutNullStreams | undefined;
  afterEach(async () => {
    if (child && child.exitCode === null) {
      const exited = once(child, 'exit');
      child.kill();
      await exited;
    }
  });

  it(
    'listens on PORT with WEBHOOK_SECRET and logs a delivered event',
    async () => {
      child = spawn(process.execPath, ['--import', 'tsx', `examples/${name}/server.ts`], {
        cwd: root,
        env: { ...process.env, PORT: '0', WEBHOOK_SECRET: SECRET },
      });
      const [, url] = await waitForOutput(child, /Receiving webhooks at (\S+)/);
      const payload = completed();
      const logged = waitForOutput(child, new RegExp(`job ${payload.data.task_id} completed`));
      const delivery = signDelivery({ secret: SECRET, payload });
      const response = await fetch(url!, {
        method: 'POST',
        headers: delivery.headers,
        body: delivery.body as BodyInit,
      });
      expect(response.status).toBe(200);
      await logged;
    },
    CHILD_TIMEOUT_MS,
  );
});
