import type { Verifier } from './verifier.js';

// jobhook's own schemes refuse with fixed texts that name a header or a check, never a value, so
// they can be shown to the sender. A custom verifier's reason is free text that might quote an
// expected signature; it goes to the log only.
const presets = new WeakSet<Verifier>();

/** Marks a verifier built by jobhook, whose refusal reasons are safe to answer with. */
export function preset<V extends Verifier>(verifier: V): V {
  presets.add(verifier);
  return verifier;
}

export function isPreset(verifier: unknown): boolean {
  return typeof verifier === 'object' && verifier !== null && presets.has(verifier as Verifier);
}
