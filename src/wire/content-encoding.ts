import { answers, type ReceiverResponse } from './answers.js';
import type { HeaderReader } from './headers.js';

/** The most of a Content-Encoding value an answer repeats. */
const MAX_SHOWN = 40;

/**
 * The answer to a body sent with a content coding (gzip, br, …): 415 `unsupported_encoding`,
 * given before the body is read. The signature is checked on the bytes as they arrive and no proxy
 * decompresses a request body, so a compressed body was refused as a bad signature or as text that
 * is not UTF-8: final answers, both wrong about the cause. `undefined` for no Content-Encoding or
 * `identity` only.
 */
export function encodingRefusal(headers: HeaderReader): ReceiverResponse | undefined {
  const value = headers.get('content-encoding');
  if (value === undefined || isIdentity(value)) return undefined;
  return answers.unsupportedEncoding(shown(value));
}

/** Whether every coding listed is `identity` (or none is listed), in any case and spacing. */
function isIdentity(value: string): boolean {
  for (const coding of value.split(',')) {
    const name = coding.trim();
    if (name !== '' && name.toLowerCase() !== 'identity') return false;
  }
  return true;
}

/**
 * `value` as an answer (and any log of it) may repeat it: a stranger chose it, so anything but the
 * characters of coding names and lists becomes `?`, and it is cut to {@link MAX_SHOWN} characters.
 */
function shown(value: string): string {
  const kept = value
    .trim()
    .slice(0, MAX_SHOWN)
    .replace(/[^A-Za-z0-9._+\-, ]/g, '?');
  return value.trim().length > MAX_SHOWN ? `${kept}...` : kept;
}
