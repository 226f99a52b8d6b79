// The client's caller signal and its time-out combined, with and without AbortSignal.any (Vercel's
// Edge Runtime has none): a call given a signal must work on every Web runtime.
import { afterEach, expect, it } from 'vitest';
import { eitherSignal } from '../../src/client/request.js';

const any = Object.getOwnPropertyDescriptor(AbortSignal, 'any')!;
afterEach(() => {
  Object.defineProperty(AbortSignal, 'any', any);
});

it.each([
  ['with AbortSignal.any', false],
  ['without it, as on the Edge Runtime', true],
])('aborts with whichever signal aborts first, and its reason (%s)', (_name, without) => {
  if (without) Object.defineProperty(AbortSignal, 'any', { ...any, value: undefined });
  const a = new AbortController();
  const b = new AbortController();
  const either = eitherSignal(a.signal, b.signal);
  expect(either.signal.aborted).toBe(false);
  b.abort(new Error('time-out'));
  expect(either.signal.aborted).toBe(true);
  expect((either.signal.reason as Error).message).toBe('time-out');
  either.dispose();

  const already = new AbortController();
  already.abort('gone');
  expect(eitherSignal(already.signal, new AbortController().signal).signal.reason).toBe('gone');
});
