// Every mistake in what is passed to the client is a JobhookError (`invalid_options`) that names
// the option, thrown by createClient (or the rejection of the call that was given it), never a
// TypeError from deep inside nor a retry loop that never ends.
import { describe, expect, test } from 'vitest';
import { createClient, registerWebhook, type ClientOptions } from 'jobhook/client';

const base = { apiKey: 'sk_test_options', baseUrl: 'https://gw.example' };
/** A fetch that must not be reached: each case fails before any request. */
const unreachable: typeof fetch = () => Promise.reject(new Error('no request should be made'));

function thrownBy(make: () => unknown): unknown {
  try {
    make();
  } catch (error) {
    return error;
  }
  return undefined;
}

/** The message names the option, or a field of it (`retries.limit`). */
const invalid = (name: string) => ({
  name: 'JobhookError',
  code: 'invalid_options',
  message: expect.stringMatching(new RegExp(`\`${name}[\`.]`)) as string,
});

describe('createClient', () => {
  test.each([
    ['maxResponseBytes', [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '1024']],
    ['timeoutMs', [0, -5, Number.NaN, Number.POSITIVE_INFINITY, '30000']],
    ['retries', [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 'twice']],
  ] as const)('refuses a bad `%s`', (name, values) => {
    for (const value of values) {
      const options = { ...base, [name]: value } as unknown as ClientOptions;
      expect(
        thrownBy(() => createClient(options)),
        `${name}: ${String(value)}`,
      ).toMatchObject(invalid(name));
    }
  });

  test.each([
    ['limit (NaN)', { limit: Number.NaN }],
    ['limit (below 0)', { limit: -2 }],
    ['methods (not a list)', { methods: 'GET' }],
    ['methods (not names)', { methods: [1] }],
    ['baseDelayMs', { baseDelayMs: -1 }],
    ['maxDelayMs', { maxDelayMs: Number.NaN }],
    ['sleep', { sleep: 1000 }],
  ])('refuses retries with a bad %s', (field, retries) => {
    const error = thrownBy(() => createClient({ ...base, retries } as unknown as ClientOptions));
    expect(error).toMatchObject(invalid('retries'));
    expect((error as Error).message).toContain(field.split(' ')[0]);
  });

  test('refuses a fetch that is not a function, and options that are not an object', () => {
    const withFetch = { ...base, fetch: 'node-fetch' } as unknown as ClientOptions;
    expect(thrownBy(() => createClient(withFetch))).toMatchObject(invalid('fetch'));
    expect(thrownBy(() => createClient(undefined as unknown as ClientOptions))).toMatchObject({
      code: 'invalid_options',
      message: expect.stringContaining('apiKey') as string,
    });
  });

  test('accepts what the documentation allows', () => {
    expect(() =>
      createClient({ ...base, maxResponseBytes: 1, timeoutMs: 0.5, retries: 0, fetch: unreachable }),
    ).not.toThrow();
    expect(() =>
      createClient({ ...base, retries: { limit: 0, methods: [], baseDelayMs: 0, maxDelayMs: 0 } }),
    ).not.toThrow();
  });
});

describe('per call', () => {
  const client = createClient({ ...base, fetch: unreachable });

  test('a bad timeoutMs or retries rejects the call before any request', async () => {
    await expect(client.account.balances({ timeoutMs: -1 })).rejects.toMatchObject(invalid('timeoutMs'));
    await expect(client.account.balances({ retries: Number.NaN })).rejects.toMatchObject(invalid('retries'));
  });

  test("registerWebhook's startupRetries is checked the same way", async () => {
    const register = (startupRetries: unknown) =>
      registerWebhook(client, {
        url: 'https://app.test/hook',
        events: ['job.completed'],
        startupRetries: startupRetries as number,
      });
    await expect(register(Number.NaN)).rejects.toMatchObject(invalid('startupRetries'));
    await expect(register({ onRetry: 'log' })).rejects.toMatchObject(invalid('startupRetries'));
  });
});

// In JavaScript nothing stops an option in the wrong place: each public function of the client
// refuses a key it does not know, naming where it belongs or what it most resembles.
describe('unknown option keys', () => {
  const client = createClient({ ...base, fetch: unreachable });
  const unknown = (message: RegExp) => ({
    name: 'JobhookError',
    code: 'invalid_options',
    message: expect.stringMatching(message) as string,
  });

  test('createClient names the option it most resembles', () => {
    const given = { ...base, timeout: 5_000 } as unknown as ClientOptions;
    expect(thrownBy(() => createClient(given))).toMatchObject(
      unknown(/no option `timeout`: did you mean `timeoutMs`\?/),
    );
    const secret = { ...base, secret: 'whsec_x' } as unknown as ClientOptions;
    expect(thrownBy(() => createClient(secret))).toMatchObject(
      unknown(/it belongs in `createReceiver\(\{ secret \}\)`/),
    );
  });

  test('register({ onRetry }) points at startupRetries: { onRetry }, from the client and from registerWebhook', async () => {
    const options = { url: 'https://my.app/webhooks', events: ['job.completed'], onRetry: () => {} };
    const home = unknown(/register has no option `onRetry`: it belongs in `startupRetries: \{ onRetry \}`/);
    await expect(client.webhooks.register(options as never)).rejects.toMatchObject(home);
    await expect(registerWebhook(client, options as never)).rejects.toMatchObject(home);
  });

  test('retries, startupRetries, waits and per-call options refuse unknown keys too', async () => {
    const retries = { ...base, retries: { limit: 1, maxDelay: 5 } } as unknown as ClientOptions;
    expect(thrownBy(() => createClient(retries))).toMatchObject(
      unknown(/`retries` has no option `maxDelay`: did you mean `maxDelayMs`\?/),
    );
    const startup = {
      url: 'https://my.app/webhooks',
      events: ['job.completed'],
      startupRetries: { limt: 2 },
    };
    await expect(client.webhooks.register(startup as never)).rejects.toMatchObject(
      unknown(/`startupRetries` has no option `limt`/),
    );
    await expect(client.images.waitFor('task_1', { pollInterval: 5 } as never)).rejects.toMatchObject(
      unknown(/waitFor has no option `pollInterval`: did you mean `pollIntervalMs`\?/),
    );
    await expect(client.account.balances({ timeout: 1 } as never)).rejects.toMatchObject(
      unknown(/no option `timeout`/),
    );
  });

  test('every documented option is still accepted', () => {
    expect(() =>
      createClient({
        ...base,
        fetch: unreachable,
        timeoutMs: 1,
        retries: { limit: 1, baseDelayMs: 1, maxDelayMs: 2, methods: ['GET'] },
        maxResponseBytes: 10,
      }),
    ).not.toThrow();
  });
});
