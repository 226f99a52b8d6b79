/**
 * Why a delivery's signature was refused, from a closed list; the sender gets one fixed text for
 * each, whatever the verifier (built-in or your own): a verifier's own `detail` goes to the log
 * only, since it might quote an expected signature.
 * - `missing_header`: a header the scheme needs is absent;
 * - `malformed_header`: a header is present but not in the scheme's form;
 * - `stale_timestamp`: the signed timestamp is outside the tolerance, either way;
 * - `no_match`: no signature matches any of the secrets (also a verifier that throws).
 */
export type RefusalCode = 'missing_header' | 'malformed_header' | 'stale_timestamp' | 'no_match';

const REFUSALS: Record<RefusalCode, string> = {
  missing_header: 'A signature header is missing.',
  malformed_header: 'A signature header is malformed.',
  stale_timestamp: 'The signed timestamp is outside the allowed tolerance; check the clocks.',
  no_match: 'No signature matches; check the secret.',
};

/** Whether `code` is one of the closed list (a custom verifier may return anything). */
export function isRefusalCode(code: unknown): code is RefusalCode {
  return typeof code === 'string' && Object.hasOwn(REFUSALS, code);
}

/** The text the sender gets for a refusal; `no_match`'s for anything off the list. */
export function refusalText(code: unknown): string {
  return isRefusalCode(code) ? REFUSALS[code] : REFUSALS.no_match;
}
