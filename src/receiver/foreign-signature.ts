import type { HeaderReader } from '../wire/headers.js';

// Each family's signature headers, whole: a delivery lacking the receiver's own but carrying one was signed another way.
const FAMILIES: readonly (readonly string[])[] = [
  ['webhook-id', 'webhook-timestamp', 'webhook-signature'],
  ['svix-id', 'svix-timestamp', 'svix-signature'],
  ['stripe-signature'],
  ['x-hub-signature-256'],
  ['x-signature'],
];

/** The signature header of another family `headers` carries whole, if any. */
export function foreignSignatureHeader(headers: HeaderReader | undefined): string | undefined {
  if (!headers) return undefined;
  const family = FAMILIES.find((names) => names.every((name) => headers.get(name) !== undefined));
  return family?.[family.length - 1];
}
