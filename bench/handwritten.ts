/**
 * The floor: Standard Webhooks v1 verification written by hand on node:crypto, the least any
 * correct receiver must do. HMAC-SHA256 of `${id}.${timestamp}.${body}`, base64 decode of the
 * `v1,` signature, timingSafeEqual, a two-sided timestamp check, JSON.parse of the same bytes
 * (decoded first) or of the same string, as serverless platforms hand a body over.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

type Header = string | string[] | undefined;

export function verifyByHand(
  key: Buffer,
  id: Header,
  timestamp: Header,
  signature: Header,
  body: Buffer | string,
): unknown {
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signature !== 'string') {
    return undefined;
  }
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return undefined;
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest();
  const given = Buffer.from(signature.slice(3), 'base64');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  return JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
}
