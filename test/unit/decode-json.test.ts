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
