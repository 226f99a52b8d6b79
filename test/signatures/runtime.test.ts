// The two forms of `#runtime` give the same answers: node.ts (node:crypto, Buffer) is what Node
// runs, web.ts (crypto.subtle, TextDecoder) what Workers and the Edge Runtime run; Node has both
// APIs, so each input goes through both here. test/environments/runtimes.test.ts runs the Web form
// on those runtimes.
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as nodeForm from '../../src/runtime/node.js';
import * as webForm from '../../src/runtime/web.js';
import { fromBase64, fromHex, toBase64, toBase64Url, toHex } from '../../src/common/bytes.js';
import { JobhookError } from '../../src/common/errors.js';
import { secretBytes } from '../../src/signatures/secret.js';

const forms = [
  ['node', nodeForm],
  ['web', webForm],
] as const;

const key = new TextEncoder().encode('a key of some length');
const other = new TextEncoder().encode('another key');
const body = new TextEncoder().encode('{"id":"evt_1","text":"ünïcødé ✓"}');
const parts = ['msg_1', '.', '1700000000', '.', body] as const;
const expected = createHmac('sha256', key).update('msg_1.1700000000.').update(body).digest();

describe.each(forms)('#runtime, %s form', (_name, form) => {
  it('signs as node:crypto does, over parts that mix text and bytes', async () => {
    expect(Buffer.from(await form.signHmac(key, parts))).toEqual(expected);
  });

  it('verifies a matching digest under any key and among several candidates', async () => {
    const keys = form.importHmacKeys([other, key]);
    expect(await form.verifyHmac(keys, parts, [new Uint8Array(32), expected])).toBe(true);
  });

  it('refuses a digest off by one bit, a truncated one, none at all, or the wrong key', async () => {
    const flipped = Uint8Array.from(expected);
    flipped[31]! ^= 1;
    const keys = form.importHmacKeys([key]);
    expect(await form.verifyHmac(keys, parts, [flipped])).toBe(false);
    expect(await form.verifyHmac(keys, parts, [expected.subarray(0, 16)])).toBe(false);
    expect(await form.verifyHmac(keys, parts, [])).toBe(false);
    expect(await form.verifyHmac(form.importHmacKeys([other]), parts, [expected])).toBe(false);
  });

  it('decodes digests as written in hex or base64', () => {
    expect(Buffer.from(form.decodeDigest(expected.toString('hex'), 'hex'))).toEqual(expected);
    expect(Buffer.from(form.decodeDigest(expected.toString('hex').toUpperCase(), 'hex'))).toEqual(expected);
    expect(Buffer.from(form.decodeDigest(expected.toString('base64'), 'base64'))).toEqual(expected);
  });

  it('decodes UTF-8, keeps a BOM, and refuses what is not UTF-8', () => {
    expect(form.decodeUtf8(body)).toBe('{"id":"evt_1","text":"ünïcødé ✓"}');
    expect(form.decodeUtf8(Uint8Array.of(0xef, 0xbb, 0xbf, 0x7b, 0x7d))).toBe('\ufeff{}');
    for (const bad of [[0xc0, 0x80], [0xed, 0xa0, 0x80], [0xff], [0xe2, 0x82]]) {
      expect(form.decodeUtf8(Uint8Array.from(bad))).toBeUndefined();
    }
  });

  it('makes random hex ids of the asked length', () => {
    const id = form.randomHex(16);
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(form.randomHex(16)).not.toBe(id);
  });
});

it('both forms agree on whether any bytes are UTF-8, and on their text', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
      expect(webForm.decodeUtf8(bytes)).toBe(nodeForm.decodeUtf8(bytes));
    }),
    { numRuns: 2000 },
  );
});

it('the Web byte helpers write and read base64, base64url and hex as Buffer does', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 80 }), (bytes) => {
      const buffer = Buffer.from(bytes);
      expect(toBase64(bytes)).toBe(buffer.toString('base64'));
      expect(toBase64Url(bytes)).toBe(buffer.toString('base64url'));
      expect(toHex(bytes)).toBe(buffer.toString('hex'));
      expect(fromBase64(buffer.toString('base64'))).toEqual(new Uint8Array(bytes));
      expect(fromHex(buffer.toString('hex'))).toEqual(new Uint8Array(bytes));
    }),
    { numRuns: 500 },
  );
});

it('a whsec_ secret must be base64 of at least one byte', () => {
  expect(secretBytes(`whsec_${Buffer.from('key').toString('base64')}`)).toEqual(
    new TextEncoder().encode('key'),
  );
  for (const bad of ['whsec_', 'whsec_==', 'whsec_abcde=', 'whsec_a', 'whsec_ab$c']) {
    expect(() => secretBytes(bad)).toThrow(JobhookError);
  }
});
