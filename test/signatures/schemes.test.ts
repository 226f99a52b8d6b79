// src/signatures/schemes.ts describes each signature scheme once, and its three readers agree on
// it: a scheme's parameters are its preset's options, its default secret form is its preset's, and
// a delivery the testing kit signs with a scheme's parameters is verified by a receiver whose
// contract names the same parameters.
import {
  createReceiver,
  hmacSha256,
  standardWebhooks,
  stripeSignature,
  type ReceiverContract,
} from 'jobhook';
import { schemeParametersOf, schemeVerifier, type SchemeParameters } from 'jobhook/extend';
import { SCHEMES } from '../../src/signatures/schemes.js';
import { signDelivery } from 'jobhook/testing';
import { describe, expect, it } from 'vitest';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const PRESETS = {
  'standard-webhooks': standardWebhooks,
  'hmac-sha256': hmacSha256,
  stripe: stripeSignature,
} as const;
const WITH_PARAMETERS: readonly SchemeParameters[] = [
  { scheme: 'standard-webhooks', secretForm: 'utf8' },
  { scheme: 'hmac-sha256', header: 'x-signature', prefix: 'v0=', encoding: 'base64', secretForm: 'utf8' },
  { scheme: 'stripe', header: 'x-timestamped', secretForm: 'whsec-base64' },
];
const schemes = Object.keys(SCHEMES) as (keyof typeof SCHEMES)[];

describe('one description of each scheme', () => {
  it.each(schemes)("%s: its parameters are its preset's options", (scheme) => {
    const preset = PRESETS[scheme] as (options: object) => unknown;
    expect(() => preset({ header: 'x-a', zzzzzzzz: 1 })).toThrow(
      `its options are ${SCHEMES[scheme].parameters.map((name) => `\`${name}\``).join(', ')}`,
    );
  });

  it.each(schemes)("%s: its default secret form is its preset's", async (scheme) => {
    const parameters = { scheme, header: 'x-a' } as SchemeParameters;
    const delivery = { secret: SECRET, body: '{}', id: 'msg_1', timestamp: 1_795_255_200 };
    const headers = await schemeVerifier(parameters).sign!(delivery);
    const verifies = async (secretForm: string) => {
      const verify = schemeVerifier({ ...parameters, secretForm } as SchemeParameters).prepare([SECRET]);
      const request = { headers: new Headers(headers), body: '{}', toleranceSeconds: Infinity };
      return (await verify(request as never)).ok;
    };
    expect(await verifies(SCHEMES[scheme].secretForm)).toBe(true);
    expect(await verifies(SCHEMES[scheme].secretForm === 'utf8' ? 'whsec-base64' : 'utf8')).toBe(false);
  });

  it.each(WITH_PARAMETERS)('the signer and the contract read %j alike', async (parameters) => {
    const contract: ReceiverContract = {
      signature: parameters,
      payload: { typePath: 'type', taskIdPath: 'data.task_id', imageUrlPath: 'data.image_url' },
    };
    const receiver = createReceiver({ secret: SECRET, contract });
    const seen: string[] = [];
    receiver.onJobCompleted((event) => void seen.push(event.data.task_id));
    const payload = {
      type: 'job.completed',
      data: { task_id: 'task_1', image_url: 'https://i.example/1.png' },
    };
    const delivery = signDelivery({ secret: SECRET, payload, scheme: parameters });
    const answer = await receiver.receive({ method: 'POST', headers: delivery.headers, body: delivery.body });
    expect(answer.status).toBe(200);
    expect(seen).toEqual(['task_1']);
  });

  it("a finding's parameters are those its scheme takes, and no other field of it", () => {
    const finding = {
      scheme: 'stripe',
      header: 'x-t',
      prefix: 't=<unix>,v1=',
      encoding: 'hex',
      secretForm: 'utf8',
    };
    expect(schemeParametersOf('stripe', finding)).toEqual({
      scheme: 'stripe',
      header: 'x-t',
      secretForm: 'utf8',
    });
    expect(schemeParametersOf('hmac-sha256', { ...finding, prefix: '', clockSkewSeconds: null })).toEqual({
      scheme: 'hmac-sha256',
      header: 'x-t',
      prefix: '',
      encoding: 'hex',
      secretForm: 'utf8',
    });
  });
});
