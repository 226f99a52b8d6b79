import { ignore } from '../common/logging.js';
import { collectWebStream, declaredLength } from '../wire/collect-stream.js';
import { BodyReadError } from '../wire/body.js';

/**
 * Reads an answer's body as text, up to `maxBytes`, with the Web collector: the gateway decides
 * how much it sends, so the client stops reading at the cap (and cancels the rest, which closes
 * the connection) instead of buffering whatever comes. Resolves with undefined when the body is
 * longer than the cap, declared or as it arrives; rejects with what the stream failed with (a
 * time-out's abort, a network error), as the caller tells those apart. The bytes read are added to
 * `counted.bytes` when it is given (a listing sums its pages).
 */
export async function readBodyCapped(
  response: Response,
  maxBytes: number,
  counted?: { bytes: number },
): Promise<string | undefined> {
  const { body } = response;
  let bytes: Uint8Array;
  try {
    bytes = await collectWebStream(
      body,
      { maxBytes },
      declaredLength(response.headers.get('content-length')),
    );
  } catch (error) {
    if (!(error instanceof BodyReadError)) throw error;
    // What the stream failed with, as it was: the caller tells a time-out from a network error.
    // eslint-disable-next-line @typescript-eslint/only-throw-error
    if (error.reason === 'unreadable') throw error.cause ?? error;
    await body?.cancel().catch(ignore);
    return undefined;
  }
  if (counted) counted.bytes += bytes.byteLength;
  return new TextDecoder().decode(bytes);
}
