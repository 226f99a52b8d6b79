// Anyone can write a `webhook-signature` header, secret or not: the candidates it carries must not
// multiply what a delivery costs. The scheme is loaded over each form of `#runtime` in turn (the
// Web form is what Workers and the Edge Runtime run; test/environments/runtimes.test.ts sends the
// same flood there), with the form's HMAC primitive counted: node:crypto's createHmac,
// crypto.subtle's sign and verify.
import type * as NodeCrypto from 'node:crypto';
import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SignedRequest, Verifier } from 'jobhook/extend';

/** The documented cap on the entries of one `webhook-signature` header (docs/security.md). */
const CAP = 32;
const NOW = 1_800_000_000;
const SECRETS = ['first-secret-of-the-rotation', 'second-secret-of-the-rotation'];
const body = Buffer.alloc(64 * 1024, '{');

const madeUp = (n: number) =>
  Array.from({ length: n }, (_, i) => `v1,${createHmac('sha256', `made-up ${i}`).digest('base64')}`);
const valid = `v1,${createHmac('sha256', SECRETS[1]!).update(`msg_1.${NOW}.`).update(body).digest('base64')}`;

function request(signature: string, headersChecked = false): SignedRequest {
  const headers: Record<string, string> = {
    'webhook-id': 'msg_1',
    'webhook-timestamp': String(NOW),
    'webhook-signature': signature,
  };
  return {
    headers: { get: (name) => headers[name] },
    body,
    now: NOW * 1000,
    toleranceSeconds: 300,
    headersChecked,
  };
}

/** `standardWebhooks` loaded over one form of `#runtime`, and the count of HMACs that form computed. */
async function schemeOver(form: 'node' | 'web') {
  vi.resetModules();
  const counted = { hmacs: 0 };
  if (form === 'web') {
    vi.doMock('#runtime', () => import('../../src/runtime/web.js'));
    for (const method of ['sign', 'verify'] as const) {
      const original = crypto.subtle[method].bind(crypto.subtle) as (...args: unknown[]) => unknown;
      vi.spyOn(crypto.subtle, method).mockImplementation(((...args: unknown[]) => {
        counted.hmacs++;
        return original(...args);
      }) as never);
    }
  } else {
    vi.doMock('node:crypto', async (importOriginal) => {
      const real = await importOriginal<typeof NodeCrypto>();
      const counting: typeof real.createHmac = (...args: Parameters<typeof real.createHmac>) => {
        counted.hmacs++;
        return real.createHmac(...args);
      };
      return { ...real, createHmac: counting };
    });
  }
  const { standardWebhooks } = await import('../../src/signatures/standard-webhooks.js');
  const scheme: Verifier = standardWebhooks();
  const verify = scheme.prepare(SECRETS);
  return {
    counted,
    verify: async (signature: string) => verify(request(signature)),
    checkHeaders: (signature: string) => verify.checkHeaders!(request(signature)),
  };
}

afterEach(() => {
  vi.restoreAllMocks();
  vi.doUnmock('#runtime');
  vi.doUnmock('node:crypto');
});

describe.each(['node', 'web'] as const)('the %s form of #runtime', (form) => {
  it(`computes one HMAC per secret, however many of the ${CAP} allowed candidates the header carries`, async () => {
    const { counted, verify } = await schemeOver(form);
    expect(await verify([...madeUp(CAP - 1), valid].join(' '))).toEqual({ ok: true, id: 'msg_1' });
    expect(counted.hmacs).toBe(SECRETS.length);

    for (const count of [1, CAP]) {
      counted.hmacs = 0;
      expect(await verify(madeUp(count).join(' '))).toMatchObject({ ok: false, code: 'no_match' });
      expect(counted.hmacs).toBe(SECRETS.length);
    }
  });

  it(`refuses a header of more than ${CAP} entries as malformed, before any HMAC`, async () => {
    const { counted, verify, checkHeaders } = await schemeOver(form);
    const flood = [...madeUp(CAP), valid].join(' ');
    expect(checkHeaders(flood)).toMatchObject({ ok: false, code: 'malformed_header' });
    expect(await verify(flood)).toMatchObject({ ok: false, code: 'malformed_header' });
    // Entries of other versions count too: each is split out and looked at.
    const mixed = [...Array.from({ length: CAP }, () => 'v1a,unknown'), valid].join(' ');
    expect(await verify(mixed)).toMatchObject({ ok: false, code: 'malformed_header' });
    expect(counted.hmacs).toBe(0);
  });
});
