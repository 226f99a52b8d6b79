import { createHash } from 'node:crypto';

/** The namespace of jobhook's name-based UUIDs (a random v4 UUID, fixed once). */
const NAMESPACE = Buffer.from('6f1c2b4e8a0d4c57b9e3a1d2c4f6e8b0', 'hex');

/**
 * The pg-boss job id for a dedupe key: a name-based UUID (version 5, RFC 9562) of the key, so that
 * every receiver gives one event the same id and pg-boss stores it once (its job table's primary
 * key is the queue and the id). Distinct keys give distinct ids (SHA-1, 122 bits kept).
 */
export function jobIdOf(key: string): string {
  const hash = createHash('sha1').update(NAMESPACE).update(key, 'utf8').digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50; // version 5
  hash[8] = (hash[8]! & 0x3f) | 0x80; // RFC 9562 variant
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
