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

/**
 * JSON text is UTF-8 (RFC 8259): a body that is not is refused rather than silently altered.
 * A body handed over as a string (serverless platforms) is parsed as it is when it is well
 * formed, since its UTF-8 (what was verified) then decodes back to it exactly; one with a lone
 * surrogate is parsed as its UTF-8 decodes (the surrogate as U+FFFD), as the verified bytes say.
 */
export function decodeJson(body: Uint8Array | string): Decoded {
  let text =
    typeof body !== 'string' ? decodeUtf8(body) : isWellFormed(body) ? body : decodeUtf8(utf8Bytes(body));
  if (text === undefined) return { ok: false, message: 'The body is not valid UTF-8.' };
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, message: 'The body is not valid JSON.' };
  }
}

/** `String#isWellFormed` (no lone surrogate), typed here: TypeScript's ES2022 lib lacks it. */
export function isWellFormed(text: string): boolean {
  return (text as string & { isWellFormed(): boolean }).isWellFormed();
}
