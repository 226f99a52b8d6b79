// A `jobhook probe` report imported as a JSON module, where TypeScript widens `scheme`, `encoding`
// and `secretForm` to string and `version` to number, is a contract as it is (issue 44): the
// receiver checks its values when it is made. A contract written by hand keeps its names checked.
import { createReceiver, type ReceiverContract } from 'jobhook';
import { expectTypeOf, test } from 'vitest';
import report from './probe-report.json' with { type: 'json' };

const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

test('the report as TypeScript infers it from the JSON is a contract', () => {
  expectTypeOf(report.contract.signature.scheme).toEqualTypeOf<string>();
  expectTypeOf(report.contract.version).toEqualTypeOf<number>();
  createReceiver({ secret, contract: report });
});

test('a contract written by hand is still held to the scheme names', () => {
  const payload: ReceiverContract['payload'] = { typePath: 'type', taskIdPath: 'a', imageUrlPath: 'b' };
  createReceiver({ secret, contract: { signature: { scheme: 'stripe' }, payload } });
  // @ts-expect-error: no such scheme
  createReceiver({ secret, contract: { signature: { scheme: 'hmac-sha265', header: 'x-a' }, payload } });
  // @ts-expect-error: the version is 1
  createReceiver({ secret, contract: { version: 2, signature: { scheme: 'stripe' }, payload } });
});
