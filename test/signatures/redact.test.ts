// The one redaction of secrets (src/common/redact.ts), checked against encodings the test computes
// itself with Node's Buffer, so a form the module forgets shows up here.
import { describe, expect, test } from 'vitest';
import { redactCause, redactor, redactValues } from '../../src/common/redaction.js';

const SECRETS = [
  'sk_live_0123456789abcdef',
  // Quotes, backslash, slash, plus, equals, space and non-ASCII: escaping and encoding differ.
  'se"cr\\et/with+plus=and space é ü 🔑',
  `whsec_${Buffer.from('key-bytes-of-a-standard-webhooks-secret').toString('base64')}`,
];

/** The forms a message may carry; the test's own list, not the module's. */
function formsOf(secret: string): Record<string, string> {
  const bytes = Buffer.from(secret, 'utf8');
  const json = JSON.stringify(secret).slice(1, -1);
  const forms: Record<string, string> = {
    raw: secret,
    json,
    jsonAscii: json.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
    url: encodeURIComponent(secret),
    urlLower: encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()),
    form: new URLSearchParams({ s: secret }).toString().slice(2),
    hex: bytes.toString('hex'),
    hexUpper: bytes.toString('hex').toUpperCase(),
    base64: bytes.toString('base64'),
    base64url: bytes.toString('base64url'),
    jsonBase64: Buffer.from(json).toString('base64'),
  };
  if (secret.startsWith('whsec_')) {
    const key = Buffer.from(secret.slice(6), 'base64');
    Object.assign(forms, {
      keyUtf8: key.toString('utf8'),
      keyHex: key.toString('hex'),
      keyBase64: key.toString('base64'),
      keyBase64url: key.toString('base64url'),
    });
  }
  return forms;
}

describe('redactor', () => {
  for (const secret of SECRETS) {
    const redact = redactor([secret]);
    for (const [name, form] of Object.entries(formsOf(secret))) {
      test(`${name} of ${JSON.stringify(secret.slice(0, 12))}… is redacted`, () => {
        const message = `gateway said: <${form}> and again ${form}.`;
        const redacted = redact(message);
        expect(redacted).not.toContain(form);
        expect(redacted).toContain('[redacted]');
        expect(redacted.startsWith('gateway said: <')).toBe(true);
      });
    }

    test(`inside a longer base64 text, at every alignment: ${JSON.stringify(secret.slice(0, 12))}…`, () => {
      for (const prefix of ['', 'a', 'ab', 'abc', '{"secret_key":"']) {
        const echoed = Buffer.from(`${prefix}${secret}","url":"https://app.test/hook"}`);
        for (const encoding of ['base64', 'base64url'] as const) {
          const text = echoed.toString(encoding);
          const redacted = redact(`echo: ${text}`);
          // The characters that carry only the secret's bits: none of their 8-character runs is left.
          const bytesBefore = Buffer.byteLength(prefix);
          const first = Math.ceil((bytesBefore * 8) / 6);
          const last = Math.floor(((bytesBefore + Buffer.byteLength(secret)) * 8) / 6);
          const inner = text.slice(first, last);
          for (let at = 0; at + 8 <= inner.length; at++) {
            expect(redacted, `${encoding} after ${JSON.stringify(prefix)}`).not.toContain(
              inner.slice(at, at + 8),
            );
          }
        }
      }
    });
  }

  test('the longest form goes first: no half-redacted pieces of a longer form remain', () => {
    const secret = 'abcdefgh-secret';
    const redact = redactor([secret]);
    expect(redact(`x ${encodeURIComponent(`"${secret}"`)} y`)).toBe('x %22[redacted]%22 y');
    expect(redact('nothing to see')).toBe('nothing to see');
  });

  test('several secrets at once; empty and very short ones are ignored rather than matched everywhere', () => {
    const redact = redactor(['first-secret-value', 'second-secret-value', '', 'ab']);
    expect(redact('first-secret-value / second-secret-value / ab')).toBe('[redacted] / [redacted] / ab');
  });
});

describe('redactValues', () => {
  const redact = redactor(['sk_live_0123456789abcdef']);

  test('redacts every string of JSON-like data, keys too, in a copy', () => {
    const data = {
      error: { message: 'Bearer sk_live_0123456789abcdef', code: 7 },
      list: ['sk_live_0123456789abcdef', null, true],
      sk_live_0123456789abcdef: 'as a key',
    };
    expect(redactValues(data, redact)).toEqual({
      error: { message: 'Bearer [redacted]', code: 7 },
      list: ['[redacted]', null, true],
      '[redacted]': 'as a key',
    });
    expect(data.error.message).toBe('Bearer sk_live_0123456789abcdef');
  });

  test('keeps objects that are not plain data as they are, and a cycle as a cycle', () => {
    const when = new Date(0);
    const cyclic: Record<string, unknown> = { note: 'sk_live_0123456789abcdef', when };
    cyclic.self = cyclic;
    const copy = redactValues(cyclic, redact);
    expect(copy.note).toBe('[redacted]');
    expect(copy.when).toBe(when);
    expect(copy.self).toBe(copy);
  });
});

describe('redactCause', () => {
  const redact = redactor(['sk_live_0123456789abcdef']);

  test('copies an error chain with its plain fields, leaving out the objects it refers to', () => {
    const inner = Object.assign(new Error('reset by sk_live_0123456789abcdef'), {
      code: 'ECONNRESET',
      headers: { authorization: 'Bearer sk_live_0123456789abcdef' },
    });
    const copy = redactCause(new TypeError('fetch failed', { cause: inner }), redact) as Error;
    expect(copy).toBeInstanceOf(Error);
    expect(copy).toMatchObject({ name: 'TypeError', message: 'fetch failed' });
    expect(copy.cause).toMatchObject({ message: 'reset by [redacted]', code: 'ECONNRESET' });
    expect(copy.cause).not.toHaveProperty('headers');
  });

  test('a thrown string or plain object is redacted; one that throws on reading becomes a plain error', () => {
    expect(redactCause('sk_live_0123456789abcdef', redact)).toBe('[redacted]');
    expect(redactCause({ code: 'E', note: 'sk_live_0123456789abcdef' }, redact)).toEqual({
      code: 'E',
      note: '[redacted]',
    });
    const hostile = new Proxy(
      {},
      {
        ownKeys: () => {
          throw new Error('sk_live_0123456789abcdef');
        },
      },
    );
    expect(redactCause(hostile, redact)).toMatchObject({ message: 'An error that could not be copied.' });
  });
});
