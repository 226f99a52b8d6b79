// startGateway({ apiKey }): one key across restarts, so an app's .env stays valid; a key that
// cannot be one is refused at once, without being shown.
import { describe, expect, test } from 'vitest';
import { startGateway } from 'jobhook/testing';
import { call } from './support.js';

const KEY = 'sk_test_simulator_key_kept_0001';

describe('the API key', () => {
  test('a given key is the main account key, and stays the same after a restart', async () => {
    for (let run = 0; run < 2; run++) {
      const gateway = await startGateway({ apiKey: KEY });
      try {
        expect(gateway.apiKey).toBe(KEY);
        const listed = await call(gateway.baseUrl, 'GET', '/api/v1/webhooks', { apiKey: KEY });
        expect(listed.status).toBe(200);
        expect(gateway.unapprovedApiKey).not.toBe(KEY);
      } finally {
        await gateway.close();
      }
    }
  });

  test('without one, each simulator has a fresh random key (tests never share one)', async () => {
    const [a, b] = await Promise.all([startGateway(), startGateway()]);
    try {
      expect(a.apiKey).toMatch(/^sk_sim_[0-9a-f]{36}$/);
      expect(b.apiKey).not.toBe(a.apiKey);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  test.each([
    ['empty', ''],
    ['only spaces', ' '.repeat(20)],
    ['15 characters', 'k'.repeat(15)],
    ['257 characters', 'k'.repeat(257)],
    ['a space inside', 'sk_test simulator_key'],
    ['a newline', 'sk_test_simulator_key\n'],
    ['a NUL', 'sk_test_simulator\u0000key'],
    ['not ASCII', 'sk_test_simulator_kéy'],
  ])('refuses a key with %s, naming the option and not the key', async (_name, apiKey) => {
    const refused = startGateway({ apiKey });
    await expect(refused).rejects.toMatchObject({ name: 'JobhookError', code: 'invalid_options' });
    await refused.catch((error: Error) => {
      expect(error.message).toMatch(
        /^startGateway: `apiKey` must be 16 to 256 visible ASCII characters \(no spaces or control characters\); got /,
      );
      if (apiKey.trim().length > 0) expect(error.message).not.toContain(apiKey.trim().slice(0, 10));
    });
  });
});
