// receiver.fetch's body reads that fail: each ends as the core's answer (400 or 413), never a
// rejected fetch() or a 500, whichever way the Request fails (a promise, a throw, a stream error).
import { describe, expect, test, vi } from 'vitest';
import { createReceiver } from 'jobhook';
import { signDelivery } from 'jobhook/testing';
import { completedPayload, SECRET, streamedPost } from '../fixtures.js';

const make = () => {
  const handler = vi.fn();
  const receiver = createReceiver({
    secret: SECRET,
    maxBodyBytes: 4096,
    logger: { error: vi.fn(), warn: vi.fn() },
  }).onJobCompleted(handler);
  return { receiver, handler };
};

/** A signed delivery, its body as bytes. */
function signed() {
  const { headers, body } = signDelivery({ secret: SECRET, payload: completedPayload() });
  return { headers, body: typeof body === 'string' ? new TextEncoder().encode(body) : body };
}

async function answerOf(response: Response) {
  const body = (await response.json()) as { error?: { code?: string } };
  return { status: response.status, code: body.error?.code };
}

/** A chunked request (no content-length) whose stream gives `chunks`, then fails if `fail`. */
function streamed(headers: Record<string, string>, chunks: Uint8Array[], fail: boolean): Request {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      if (fail) controller.error(new Error('connection reset'));
      else controller.close();
    },
  });
  return streamedPost(headers, body);
}

describe('receiver.fetch body reads', () => {
  test('a streamed body that fails part-way: 400 body_unreadable', async () => {
    const { receiver, handler } = make();
    const { headers, body } = signed();
    const half = body.subarray(0, 10);
    const answer = await answerOf(await receiver.fetch(streamed(headers, [half], true)));
    expect(answer).toEqual({ status: 400, code: 'body_unreadable' });
    expect(handler).not.toHaveBeenCalled();
  });

  test('a streamed body past the limit: 413, and the stream is cancelled', async () => {
    const { receiver, handler } = make();
    const { headers } = signed();
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(new Uint8Array(1024));
      },
      cancel() {
        cancelled = true;
      },
    });
    const request = new Request('http://127.0.0.1/webhooks', {
      method: 'POST',
      headers,
      body,
      duplex: 'half',
    } as RequestInit);
    expect(await answerOf(await receiver.fetch(request))).toEqual({ status: 413, code: 'payload_too_large' });
    expect(cancelled).toBe(true);
    expect(handler).not.toHaveBeenCalled();
  });

  test('a body already read (arrayBuffer() rejects): 400 body_unreadable', async () => {
    const { receiver, handler } = make();
    const { headers, body } = signed();
    const request = new Request('http://127.0.0.1/webhooks', { method: 'POST', headers, body });
    await request.text();
    expect(request.headers.get('content-length')).toBeNull();
    // undici drops a declared length; say it, so that the one-call read (arrayBuffer()) is taken.
    const declared = new Proxy(request, {
      get: (target, name) =>
        name === 'headers'
          ? new Headers({ ...headers, 'content-length': String(body.byteLength) })
          : (Reflect.get(target, name, target) as unknown),
    });
    const answer = await answerOf(await receiver.fetch(declared));
    expect(answer).toEqual({ status: 400, code: 'body_unreadable' });
    expect(handler).not.toHaveBeenCalled();
  });

  test.each([
    ['arrayBuffer() throws', 'arrayBuffer', true],
    ['the body getter throws', 'body', false],
  ] as const)('%s: 400 body_unreadable', async (_name, failing, declared) => {
    const { receiver, handler } = make();
    const { headers, body } = signed();
    const sent = declared ? { ...headers, 'content-length': String(body.byteLength) } : headers;
    const request = {
      method: 'POST',
      url: 'http://127.0.0.1/webhooks',
      headers: new Headers(sent),
      get body(): ReadableStream {
        if (failing === 'body') throw new TypeError('Body is unusable');
        return new Response(body).body!;
      },
      arrayBuffer(): Promise<ArrayBuffer> {
        if (failing === 'arrayBuffer') throw new TypeError('Body is unusable');
        return new Response(body).arrayBuffer();
      },
    } as unknown as Request;
    expect(await answerOf(await receiver.fetch(request))).toEqual({ status: 400, code: 'body_unreadable' });
    expect(handler).not.toHaveBeenCalled();
  });
});
