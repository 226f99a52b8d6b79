// The two capped body collectors every reader of a body uses (src/wire/collect-stream.ts): the
// Node one (the receiver's Node adapters, the gateway simulator) and the Web one (receiver.fetch,
// the client). What each keeps, refuses and leaves of a stream, on real Node and Web streams.
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { collectNodeStream, collectWebStream, limitsWithin } from '../../src/wire/collect-stream.js';
import { BodyReadError } from '../../src/wire/body.js';

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (body: Uint8Array) => new TextDecoder().decode(body);

/** What a collect rejected with: its reason and whether it had a cause. */
async function refusal(collect: Promise<unknown>) {
  const error = await collect.then(
    () => undefined,
    (failed: unknown) => failed,
  );
  expect(error).toBeInstanceOf(BodyReadError);
  const { reason, cause } = error as BodyReadError;
  return { reason, cause };
}

/** A Node stream that gives `chunks`, then ends (or fails with `fail`). */
function nodeStream(chunks: string[], fail?: Error) {
  let at = 0;
  return new Readable({
    read() {
      if (at < chunks.length) return void this.push(Buffer.from(chunks[at++]!));
      if (fail) this.destroy(fail);
      else this.push(null);
    },
  });
}

describe('collectNodeStream', () => {
  it('collects every chunk, within the limit', async () => {
    const body = await collectNodeStream(nodeStream(['{"a":', '1}']), { maxBytes: 7 });
    expect(text(body)).toBe('{"a":1}');
  });

  it('refuses a stream that passes the limit, and stops taking its data', async () => {
    const stream = nodeStream(['12345', '67890', 'more']);
    expect(await refusal(collectNodeStream(stream, { maxBytes: 8 }))).toEqual({
      reason: 'too_large',
      cause: undefined,
    });
    expect(stream.listenerCount('data')).toBe(0);
    expect(stream.isPaused()).toBe(true);
  });

  it('refuses a declared length over the limit before reading anything', async () => {
    const stream = nodeStream(['x']);
    expect((await refusal(collectNodeStream(stream, { maxBytes: 8 }, 9))).reason).toBe('too_large');
    expect(stream.listenerCount('data')).toBe(0);
    expect(stream.readableFlowing).toBe(null);
  });

  it('is unreadable when the stream ends short of its declared length, fails, or was decoded to text', async () => {
    expect((await refusal(collectNodeStream(nodeStream(['abc']), { maxBytes: 8 }, 5))).reason).toBe(
      'unreadable',
    );
    const failure = new Error('connection reset');
    expect(await refusal(collectNodeStream(nodeStream(['abc'], failure), { maxBytes: 8 }))).toEqual({
      reason: 'unreadable',
      cause: failure,
    });
    const decoded = nodeStream(['abc']).setEncoding('utf8');
    expect((await refusal(collectNodeStream(decoded, { maxBytes: 8 }))).reason).toBe('unreadable');
  });

  it('stops once its signal aborts, or its time is up (limitsWithin)', async () => {
    const controller = new AbortController();
    const endless = new Readable({ read() {} });
    endless.push('a');
    const collecting = collectNodeStream(endless, { maxBytes: 100, signal: controller.signal });
    controller.abort();
    expect((await refusal(collecting)).reason).toBe('unreadable');
    const slow = new Readable({ read() {} });
    const limits = limitsWithin(100, 20);
    expect((await refusal(collectNodeStream(slow, limits))).reason).toBe('unreadable');
    expect(limits.signal?.aborted).toBe(true);
  });
});

/** A Web stream that gives `chunks` and then ends, or gives `filler` for ever; it counts what was pulled. */
function webStream(chunks: string[], { endless = false } = {}) {
  const seen = { pulled: 0, cancelled: false };
  let at = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      seen.pulled++;
      if (at < chunks.length) controller.enqueue(bytes(chunks[at++]!));
      else if (endless) controller.enqueue(bytes('x'.repeat(10)));
      else controller.close();
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  return { stream, seen };
}

describe('collectWebStream', () => {
  it('collects every chunk within the limit; no stream is an empty body', async () => {
    expect(text(await collectWebStream(webStream(['{"a":', '1}']).stream, { maxBytes: 7 }))).toBe('{"a":1}');
    expect(await collectWebStream(null, { maxBytes: 7 })).toHaveLength(0);
  });

  it('refuses a stream that passes the limit and leaves the rest unread, for the caller to read or cancel', async () => {
    const { stream, seen } = webStream(['12345', '67890', 'rest']);
    expect((await refusal(collectWebStream(stream, { maxBytes: 8 }))).reason).toBe('too_large');
    expect(stream.locked).toBe(false);
    expect(seen.cancelled).toBe(false);
    expect(text(await collectWebStream(stream, { maxBytes: 100 }))).toBe('rest');
  });

  it('refuses a declared length over the limit before reading, and cancels the stream', async () => {
    const { stream, seen } = webStream(['x']);
    expect((await refusal(collectWebStream(stream, { maxBytes: 8 }, 9))).reason).toBe('too_large');
    expect(seen).toEqual({ pulled: expect.any(Number), cancelled: true });
  });

  it('is unreadable with what the stream failed with as the cause', async () => {
    const failure = new Error('connection reset');
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes('abc'));
        controller.error(failure);
      },
    });
    expect(await refusal(collectWebStream(stream, { maxBytes: 8 }))).toEqual({
      reason: 'unreadable',
      cause: failure,
    });
  });

  it('stops and cancels the stream once its time is up: what came is not the body', async () => {
    const { stream, seen } = webStream([], { endless: false });
    const hanging = new ReadableStream<Uint8Array>({ pull: () => new Promise(() => undefined) });
    expect((await refusal(collectWebStream(hanging, limitsWithin(100, 20)))).reason).toBe('unreadable');
    expect(await collectWebStream(stream, limitsWithin(100, 1000))).toHaveLength(0);
    expect(seen.cancelled).toBe(false);
  });
});
