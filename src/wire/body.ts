import { decodeUtf8 } from '#runtime';
import { utf8Bytes } from '../common/bytes.js';

/** A delivery's body as adapters hand it over, exactly as received. */
export type BodyInput = Uint8Array | ArrayBuffer | string;

/** The raw bytes of a body, or `undefined` when what was given is not raw (a parsed object). */
export function rawBytes(body: unknown): Uint8Array | undefined {
  if (body instanceof Uint8Array) return body;
  if (typeof body === 'string') return utf8Bytes(body);
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  return undefined;
}

export type Decoded = { ok: true; value: unknown } | { ok: false; message: string };

/** JSON text is UTF-8 (RFC 8259): a body that is not is refused rather than silently altered. */
export function decodeJson(bytes: Uint8Array): Decoded {
  let text = decodeUtf8(bytes);
  if (text === undefined) return { ok: false, message: 'The body is not valid UTF-8.' };
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, message: 'The body is not valid JSON.' };
  }
}
