/**
 * Reads an answer's body as text, up to `maxBytes`: the gateway decides how much it sends, so the
 * client stops reading at the cap (and cancels the rest) instead of buffering whatever comes.
 * Resolves with undefined when the body is longer than the cap, declared or as it arrives. The
 * bytes read are added to `counted.bytes` when it is given (a listing sums its pages).
 */
export async function readBodyCapped(
  response: Response,
  maxBytes: number,
  counted?: { bytes: number },
): Promise<string | undefined> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    return undefined;
  }
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let received = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    received += value.byteLength;
    if (counted) counted.bytes += value.byteLength;
    if (received > maxBytes) {
      // Cancelling closes the connection: nothing more of the body is read or kept.
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    text += decoder.decode(value, { stream: true });
  }
}
