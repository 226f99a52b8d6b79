// The built CLI against a gateway and a receiver that put terminal control sequences into what
// they answer: nothing the CLI prints may carry one (colours, screen clears, titles, clipboard).
import { once } from 'node:events';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BUILD_TIMEOUT_MS, ensureDist } from '../support/dist.js';
import { oneLineError, runCli } from './run-cli.js';
import { SECRET } from '../fixtures.js';

beforeAll(ensureDist, BUILD_TIMEOUT_MS);

/**
 * CSI (clear screen, cursor home), OSC 0 (window title) and OSC 52 (clipboard) with both
 * terminators, 8-bit CSI/OSC/ST, BEL, backspace, carriage return, DEL, a lone ESC.
 */
const HOSTILE =
  'evil\u001b[2J\u001b[H\u001b]0;pwned title\u0007\u001b]52;c;cHduZWQ=\u001b\\\u009b31m\u009d8;;x\u009c' +
  '\u0007\u0008\r\u007fend\u001b';
/** What a terminal must never receive: C0 except tab and line feed, DEL, C1. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

async function serve(listener: RequestListener): Promise<string> {
  const server = createServer(listener);
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const webhook = {
  id: 3,
  url: `https://app.test/${HOSTILE}`,
  events: ['job.completed', HOSTILE],
  status: `active${HOSTILE}`,
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-01T00:00:00Z',
  total_sent: 1,
  total_failed: 0,
  // A line break could also fake a row of the table.
  last_error: `${HOSTILE}\n4  active  job.completed  0  0  https://attacker.test`,
};

/** A gateway whose every answer is `answer` (the list endpoint included). */
function hostileGateway(status: number, answer: unknown) {
  return serve((_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  });
}

describe('the CLI prints nothing a terminal would obey', () => {
  it('webhooks list: the table is printable, one row per webhook', async () => {
    const baseUrl = await hostileGateway(200, { success: true, data: [webhook] });
    const result = await runCli(['webhooks', 'list'], {
      GATEWAY_API_KEY: 'sk_test',
      GATEWAY_URL: baseUrl,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).not.toMatch(CONTROL);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/^3\s+activeevil.*end\s/);
    expect(lines[1]).toContain('https://app.test/evil');
    expect(result.stdout).not.toContain('pwned');
  });

  it('webhooks list --json: printable, and the data parses back intact', async () => {
    const baseUrl = await hostileGateway(200, { success: true, data: [webhook] });
    const result = await runCli(['webhooks', 'list', '--json'], {
      GATEWAY_API_KEY: 'sk_test',
      GATEWAY_URL: baseUrl,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).not.toMatch(CONTROL);
    expect(JSON.parse(result.stdout)).toEqual([webhook]);
  });

  it("a gateway's error message becomes one printable line on stderr", async () => {
    const baseUrl = await hostileGateway(400, {
      success: false,
      error: { code: `invalid_request${HOSTILE}`, message: `bad ${HOSTILE}\nsecond line` },
    });
    const result = await runCli(['webhooks', 'delete', '3'], {
      GATEWAY_API_KEY: 'sk_test',
      GATEWAY_URL: baseUrl,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).not.toMatch(CONTROL);
    // (The trailing ESC of the code takes the next characters with it, as a terminal would.)
    expect(oneLineError(result)).toMatch(
      /^jobhook: DELETE \/api\/v1\/webhooks\/3 failed \(400 invalid_requestevil.*end.* bad evil.*end$/,
    );
  });

  it('generate --wait: a failed job whose error echoes the API key is printed with the key redacted', async () => {
    const apiKey = 'sk_live_generate_wait_echo_0123';
    const baseUrl = await serve((req, res) => {
      req.resume();
      const data =
        req.method === 'POST'
          ? { task_id: 'task_1', credits_used: 1, remaining_credits: 9 }
          : {
              task_id: 'task_1',
              status: 'failed',
              error: { code: `denied_${apiKey}`, message: `you sent ${req.headers.authorization}` },
            };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ success: true, data }));
    });
    const result = await runCli(['generate', 'a fox', '--wait'], {
      GATEWAY_API_KEY: apiKey,
      GATEWAY_URL: baseUrl,
    });
    expect(result.code).toBe(1);
    expect(oneLineError(result)).toBe(
      'jobhook: job task_1 failed (denied_[redacted]): you sent Bearer [redacted]',
    );
    expect(result.stdout + result.stderr).not.toContain(apiKey);
  });

  it('an error that echoes the API key with a control character inside is printed with the key redacted', async () => {
    const apiKey = 'sk_live_control_echo_0123456789';
    // NUL and BEL inside the key: stripped for the terminal, the key must not come back whole.
    const echoed = `${apiKey.slice(0, 8)}\u0000${apiKey.slice(8, 16)}\u0007${apiKey.slice(16)}`;
    const baseUrl = await hostileGateway(400, {
      success: false,
      error: { code: 'invalid_request', message: `unknown key ${echoed}` },
    });
    const result = await runCli(['webhooks', 'delete', '3'], {
      GATEWAY_API_KEY: apiKey,
      GATEWAY_URL: baseUrl,
    });
    expect(result.code).toBe(1);
    expect(result.stdout + result.stderr).not.toContain(apiKey);
    expect(oneLineError(result)).toMatch(/unknown key \[redacted\]$/);
  });

  it("send: the receiver's status text and body are printed without control characters", async () => {
    const url = await serve((req, res) => {
      req.resume();
      // Node refuses C0 in a status message but writes 8-bit bytes: C2 9B is the UTF-8 of a C1 CSI.
      res.writeHead(418, 'Teapot \u00c2\u009b2J', { 'content-type': 'text/plain' }).end(HOSTILE);
    });
    const result = await runCli(['send', url, '--secret', SECRET]);
    expect(result.code).toBe(1);
    expect(result.stdout).not.toMatch(CONTROL);
    expect(result.stdout).toMatch(/^418 Teapot 2J\nevil.*end\n$/);
  });
});
