// Refusals are visible by default (one line each, bounded a minute) and a receiver that refuses
// every delivery says so loudly: a wrong secret must never look like a quiet, healthy receiver.
import { createReceiver, type ReceiverObserver, type ReceiverOptions } from 'jobhook';
import { signDelivery } from 'jobhook/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { completedPayload, SECRET } from '../fixtures.js';

// The secret the sender signs with when the receiver was given another: the mistake this is about.
const OTHER_SECRET = `whsec_${Buffer.from('another-secret-entirely-0123456789').toString('base64')}`;

const TENANT_B_SECRET = `whsec_${Buffer.from('tenant-b-secret-0123456789abcdef').toString('base64')}`;

const clock = { now: Date.parse('2026-11-27T12:00:00Z') };
afterEach(() => {
  clock.now = Date.parse('2026-11-27T12:00:00Z');
});

function delivery(secret: string, n: number) {
  const signed = signDelivery({
    secret,
    payload: completedPayload({ id: `evt_${n}` }),
    timestamp: Math.floor(clock.now / 1000),
  });
  return { headers: signed.headers, body: signed.body };
}

describe('refused deliveries in the log', () => {
  it('the default logger shows a refusal at warn, without the secret or the signature', async () => {
    const warned: string[] = [];
    const original = console.warn;
    console.warn = (line: string) => void warned.push(line);
    try {
      const receiver = createReceiver({ secret: SECRET, now: () => clock.now });
      const sent = delivery(OTHER_SECRET, 1);
      expect((await receiver.receive(sent)).status).toBe(401);
      expect(warned).toHaveLength(1);
      expect(warned[0]).toContain('refused a delivery (401 no_match)');
      const signature = sent.headers['webhook-signature']!.slice(3);
      for (const secret of [SECRET, OTHER_SECRET, signature]) expect(warned[0]).not.toContain(secret);
    } finally {
      console.warn = original;
    }
  });

  it('a flood is logged ten lines a minute, then says how many it left out', async () => {
    const lines: string[] = [];
    const receiver = createReceiver({
      secret: SECRET,
      now: () => clock.now,
      logger: { error: (line) => lines.push(line), warn: (line) => lines.push(line) },
    });
    for (let n = 0; n < 25; n++) await receiver.receive({ headers: {}, body: '{}' });
    expect(lines).toHaveLength(10);
    clock.now += 60_000;
    await receiver.receive({ headers: {}, body: '{}' });
    expect(lines.slice(10)).toEqual([
      'jobhook: 15 more refused deliveries in the minute before were not logged one by one.',
      expect.stringContaining('refused a delivery (401 missing_header)'),
    ]);
  });
});

describe('the alarm when no delivery verifies', () => {
  function setUp(secret: ReceiverOptions['secret'] = SECRET) {
    const errors: string[] = [];
    const warnings: string[] = [];
    const alarms: unknown[] = [];
    const observer: ReceiverObserver = {
      start: () => undefined,
      end: () => undefined,
      signaturesFailing: (alarm) => void alarms.push(alarm),
    };
    const receiver = createReceiver({
      secret,
      now: () => clock.now,
      observer,
      logger: { error: (line) => errors.push(line), warn: (line) => warnings.push(line) },
    }).onJobCompleted(() => undefined);
    const alarmLines = () => warnings.filter((line) => line.includes('deliveries were all refused'));
    return { receiver, errors, alarms, alarmLines };
  }

  it('rings at the 10th signature refusal in a row, then at most every 5 minutes; unconfirmed (warn) without a registered webhook', async () => {
    const { receiver, errors, alarms, alarmLines } = setUp();
    const started = clock.now;
    for (let n = 0; n < 9; n++) await receiver.receive(delivery(OTHER_SECRET, n));
    expect(alarmLines()).toEqual([]);
    await receiver.receive(delivery(OTHER_SECRET, 9));
    expect(alarmLines()).toHaveLength(1);
    expect(alarmLines()[0]).toContain('the last 10 deliveries were all refused');
    expect(alarmLines()[0]).toContain('secret probably differs');
    expect(alarmLines()[0]).toContain('Unconfirmed');
    expect(errors).toEqual([]);
    expect(alarms).toEqual([{ refusedInARow: 10, since: started, confirmed: false }]);
    for (let n = 10; n < 30; n++) await receiver.receive(delivery(OTHER_SECRET, n));
    expect(alarmLines()).toHaveLength(1);
    clock.now += 5 * 60_000;
    await receiver.receive(delivery(OTHER_SECRET, 30));
    expect(alarmLines()).toHaveLength(2);
    expect(alarms).toHaveLength(2);
  });

  it('a verified delivery ends the run; unsigned junk never rings it', async () => {
    const { receiver, errors, alarmLines } = setUp();
    for (let n = 0; n < 9; n++) await receiver.receive(delivery(OTHER_SECRET, n));
    expect((await receiver.receive(delivery(SECRET, 100))).status).toBe(200);
    for (let n = 10; n < 19; n++) await receiver.receive(delivery(OTHER_SECRET, n));
    for (let n = 0; n < 50; n++) await receiver.receive({ headers: {}, body: 'junk' });
    expect(errors).toEqual([]);
    expect(alarmLines()).toEqual([]);
  });

  it("counts per tenant: another tenant's verified deliveries do not hide a stale secret, and the alarm names the tenant", async () => {
    const secrets: Record<string, string> = { a: SECRET, b: TENANT_B_SECRET };
    const { receiver, alarms, alarmLines } = setUp(({ headers }) => {
      const tenant = headers.get('x-tenant');
      return tenant !== undefined && Object.hasOwn(secrets, tenant)
        ? { tenant, secret: secrets[tenant]! }
        : undefined;
    });
    for (let n = 0; n < 30; n++) {
      // Tenant a's sender signs with a secret a no longer has; b's deliveries verify in between.
      const stale = delivery(OTHER_SECRET, n);
      expect(
        (await receiver.receive({ ...stale, headers: { ...stale.headers, 'x-tenant': 'a' } })).status,
      ).toBe(401);
      const fine = delivery(TENANT_B_SECRET, 100 + n);
      expect(
        (await receiver.receive({ ...fine, headers: { ...fine.headers, 'x-tenant': 'b' } })).status,
      ).toBe(200);
    }
    expect(alarms).toEqual([expect.objectContaining({ refusedInARow: 10, tenant: 'a', confirmed: false })]);
    expect(alarmLines()[0]).toContain('for the tenant "a"');
  });

  describe('with more tenants refusing than it counts at once (1,000, MAX_TENANT_RUNS)', () => {
    const BOUND = 1000;
    // Every tenant's secret is SECRET; each sender here signs with another one.
    const tenantSecret: ReceiverOptions['secret'] = ({ headers }) => {
      const tenant = headers.get('x-tenant');
      return tenant === undefined ? undefined : { tenant, secret: SECRET };
    };
    let n = 0;
    const refuse = async (receiver: ReturnType<typeof setUp>['receiver'], tenant: string) => {
      const stale = delivery(OTHER_SECRET, n++);
      const answer = await receiver.receive({ ...stale, headers: { ...stale.headers, 'x-tenant': tenant } });
      expect(answer.status).toBe(401);
    };

    it('forgets the run refused longest ago to make room: its count starts again; a new run is counted', async () => {
      const { receiver, alarms } = setUp(tenantSecret);
      for (let i = 0; i < 9; i++) await refuse(receiver, 'oldest');
      for (let t = 0; t < BOUND; t++) await refuse(receiver, `tenant-${t}`);
      // Its 10th refusal in a row, but its run was forgotten to make room: no alarm yet.
      await refuse(receiver, 'oldest');
      expect(alarms).toEqual([]);
      for (let i = 0; i < 8; i++) await refuse(receiver, 'oldest');
      expect(alarms).toEqual([]);
      await refuse(receiver, 'oldest');
      expect(alarms).toEqual([expect.objectContaining({ refusedInARow: 10, tenant: 'oldest' })]);
      // A tenant first refused now, with the runs at their bound, rings as any other.
      for (let i = 0; i < 10; i++) await refuse(receiver, 'newcomer');
      expect(alarms).toEqual([
        expect.objectContaining({ tenant: 'oldest' }),
        expect.objectContaining({ refusedInARow: 10, tenant: 'newcomer' }),
      ]);
    });

    it('still rings for a tenant with a stale secret while more tenants than that refuse in between', async () => {
      const { receiver, alarms, alarmLines } = setUp(tenantSecret);
      let stranger = 0;
      for (let i = 0; i < 10; i++) {
        await refuse(receiver, 'stale');
        // 150 tenants' refusals between two of its own: 1,500 in all, more than the bound.
        for (let t = 0; t < 150; t++) await refuse(receiver, `stranger-${stranger++}`);
      }
      expect(alarms).toEqual([expect.objectContaining({ refusedInARow: 10, tenant: 'stale' })]);
      expect(alarmLines()[0]).toContain('for the tenant "stale"');
      // The first strangers' runs are gone (bounded): 9 more refusals of the first do not ring.
      for (let i = 0; i < 9; i++) await refuse(receiver, 'stranger-0');
      expect(alarms).toHaveLength(1);
    });
  });

  it('a delivery signed in another family counts, and its lines name the header seen and suggest jobhook probe', async () => {
    const { receiver, alarms, alarmLines } = setUp();
    for (let n = 0; n < 10; n++) {
      const signed = signDelivery({
        secret: SECRET,
        payload: completedPayload({ id: `evt_${n}` }),
        scheme: 'stripe',
        timestamp: Math.floor(clock.now / 1000),
      });
      expect((await receiver.receive({ headers: signed.headers, body: signed.body })).status).toBe(401);
    }
    expect(alarms).toEqual([
      expect.objectContaining({ refusedInARow: 10, foreignHeader: 'stripe-signature' }),
    ]);
    expect(alarmLines()[0]).toContain('they carry stripe-signature');
    expect(alarmLines()[0]).toContain('jobhook probe');
  });
});
