// Issue 23.7: `jobhook send` reads at most --max-answer-bytes of an answer, never an endless one.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BUILD_TIMEOUT_MS, ensureDist } from '../support/dist.js';
import { oneLineError, runCli } from './run-cli.js';

beforeAll(ensureDist, BUILD_TIMEOUT_MS);

const SECRET = `whsec_${Buffer.from('send-answer-test-secret-0123456').toString('base64')}`;
const chunk = Buffer.alloc(64 * 1024, 'a');
// Answers 200 and then writes for as long as the client reads: an endless answer.
const endless = createServer((req, res) => {
  req.resume();
  res.writeHead(200, { 'content-type': 'text/plain' });
  const write = () => {
    while (!res.destroyed && res.write(chunk));
    if (!res.destroyed) res.once('drain', write);
  };
  write();
});
let url: string;
beforeAll(async () => {
  endless.listen(0, '127.0.0.1');
  await once(endless, 'listening');
  url = `http://127.0.0.1:${(endless.address() as AddressInfo).port}/webhooks`;
});
afterAll(() => {
  endless.closeAllConnections();
  endless.close();
});

it('an endless answer fails at the cap with one clear line, long before the time-out', async () => {
  const result = await runCli(['send', url, '--secret', SECRET, '--timeout', '600000']);
  expect(result.code).toBe(1);
  expect(result.stdout).toBe('200 OK\n');
  expect(oneLineError(result)).toBe(
    'jobhook: the answer is longer than 1048576 bytes (--max-answer-bytes); stopped reading it',
  );
});

it('--max-answer-bytes sets the cap', async () => {
  const result = await runCli(['send', url, '--secret', SECRET, '--max-answer-bytes', '1000']);
  expect(oneLineError(result)).toMatch(/longer than 1000 bytes/);
});
