// A body handed over as a string is parsed as that string only when its UTF-8 (the bytes that
// were verified) decodes back to it exactly: otherwise the verified bytes are decoded.
import { describe, expect, it } from 'vitest';
import { decodeJson, rawBytes } from '../../src/wire/body.js';

describe('decodeJson with the string a body came as', () => {
  it('parses a well-formed string as the bytes would be, byte-order mark included', () => {
    for (const text of ['{"a":"é🙂"}', '\ufeff{"a":1}']) {
      expect(decodeJson(text)).toEqual(decodeJson(rawBytes(text)!));
      expect(decodeJson(text).ok).toBe(true);
    }
  });

  it('decodes the verified bytes instead when the string holds a lone surrogate', () => {
    const text = '{"a":"\ud800"}';
    const decoded = decodeJson(text);
    expect(decoded).toEqual({ ok: true, value: { a: '\ufffd' } });
  });
});

describe('decodeJson with bytes', () => {
  // Decoding replaces each invalid sequence with U+FFFD, and a text without one is taken as it is:
  // the bytes are validated again only when the text holds one, which valid UTF-8 may also do.
  it.each([
    ['a lone continuation byte', [0x80]],
    ['an overlong encoding of "/"', [0xc0, 0xaf]],
    ['an encoded surrogate', [0xed, 0xa0, 0x80]],
    ['a truncated sequence', [0xe2, 0x82]],
    ['a byte that is never UTF-8', [0xff]],
  ])('refuses %s', (_name, bad) => {
    const bytes = Buffer.concat([Buffer.from('{"a":"'), Buffer.from(bad), Buffer.from('"}')]);
    expect(decodeJson(bytes)).toEqual({ ok: false, message: 'The body is not valid UTF-8.' });
  });

  it('takes a U+FFFD that was sent, well encoded, as the character it is', () => {
    const bytes = Buffer.from('{"a":"\ufffd é"}', 'utf8');
    expect([...bytes.subarray(6, 9)]).toEqual([0xef, 0xbf, 0xbd]);
    expect(decodeJson(bytes)).toEqual({ ok: true, value: { a: '\ufffd é' } });
    expect(decodeJson(new Uint8Array(bytes))).toEqual({ ok: true, value: { a: '\ufffd é' } });
  });
});
