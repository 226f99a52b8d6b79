// Generated deliveries for the hostile suites: recipes fast-check can shrink, built into wire
// deliveries with fresh ids when the property runs. Every recipe but `valid` must be refused.
import fc from 'fast-check';
import { signDelivery } from 'jobhook/testing';
import { completed, failed, SECRET } from '../adapters/fixtures.js';

/** The receiver's clock in these suites, in Unix seconds. */
export const NOW = 1_800_000_000;
export const TOLERANCE = 300;

export interface WireDelivery {
  method: string;
  headers: Record<string, string | string[]>;
  body: Uint8Array;
}

export type Kind = 'valid' | 'mutated' | 'random' | 'wrong-secret' | 'stale' | 'bad-body' | 'wrong-method';

export interface Built {
  kind: Kind;
  /** The payload id of a `valid` delivery, which must be dispatched exactly once. */
  eventId?: string;
  delivery: WireDelivery;
}

/** The statuses each kind may get; `valid` is the only one that may be dispatched. */
export const expected: Record<Kind, readonly number[]> = {
  valid: [200],
  mutated: [401],
  random: [400, 401, 405],
  'wrong-secret': [401],
  stale: [401],
  'bad-body': [400],
  'wrong-method': [405],
};

/** Every status the design gives a hostile delivery. */
export const DESIGN_4XX = [400, 401, 405, 413] as const;

/** Strings a header value can carry: for `receive` anything, over HTTP what Node lets a client send. */
export interface TextArbitraries {
  value: fc.Arbitrary<string>;
  name: fc.Arbitrary<string>;
}

export const anyText: TextArbitraries = {
  value: fc.string({ unit: 'binary', maxLength: 64 }),
  name: fc.string({ unit: 'binary', minLength: 1, maxLength: 24 }),
};

// Names that change how HTTP itself frames or routes the request, not what jobhook sees.
const FRAMING = new Set([
  'content-length',
  'transfer-encoding',
  'host',
  'connection',
  'expect',
  'upgrade',
  'keep-alive',
  'te',
  'trailer',
]);

const headerChar = fc.oneof(
  fc.constant('\t'),
  fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)),
);

export const httpText: TextArbitraries = {
  value: fc.string({ unit: headerChar, maxLength: 64 }),
  name: fc
    .stringMatching(/^[a-zA-Z0-9!#$%&'*+.^_`|~-]{1,24}$/)
    .filter((name) => !FRAMING.has(name.toLowerCase())),
};

type Mutation = (d: WireDelivery) => WireDelivery;

const SIGNED_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

function setHeader(d: WireDelivery, name: string, value: string | string[]): WireDelivery {
  return { ...d, headers: { ...d.headers, [name]: value } };
}

/** Changes that always alter what was signed, or the signature itself: none can stay valid. */
function mutations(text: TextArbitraries): fc.Arbitrary<Mutation> {
  return fc.oneof(
    fc
      .record({ at: fc.nat(), xor: fc.integer({ min: 1, max: 255 }) })
      .map(({ at, xor }) => (d: WireDelivery) => {
        const body = Uint8Array.from(d.body);
        body[at % body.length]! ^= xor;
        return { ...d, body };
      }),
    fc.uint8Array({ minLength: 1, maxLength: 8 }).map((extra) => (d: WireDelivery) => ({
      ...d,
      body: Buffer.concat([d.body, extra]),
    })),
    fc.nat().map((cut) => (d: WireDelivery) => ({ ...d, body: d.body.subarray(0, cut % d.body.length) })),
    fc
      .constantFrom('webhook-id', 'webhook-timestamp', 'webhook-signature')
      .map((name) => (d: WireDelivery) => {
        const headers = { ...d.headers };
        delete headers[name];
        return { ...d, headers };
      }),
    // Not ending in a space or tab: HTTP trims those from header values, so such a suffix would
    // reach an adapter as the original id (seed 1374738628).
    fc
      .string({ minLength: 1, maxLength: 8 })
      .filter((suffix) => !/[ \t]$/.test(suffix))
      .map(
        (suffix) => (d: WireDelivery) =>
          setHeader(d, 'webhook-id', `${String(d.headers['webhook-id'])}${suffix}`),
      ),
    // The timestamp moves by at least a second: the signature covers it.
    fc
      .oneof(fc.integer({ min: -1_000_000, max: -1 }), fc.integer({ min: 1, max: 1_000_000 }))
      .map((shift) => (d: WireDelivery) => setHeader(d, 'webhook-timestamp', String(NOW + shift))),
    text.value.map((timestamp) => (d: WireDelivery) => setHeader(d, 'webhook-timestamp', `x${timestamp}`)),
    fc
      .oneof(
        fc
          .uint8Array({ minLength: 32, maxLength: 32 })
          .map((bytes) => `v1,${Buffer.from(bytes).toString('base64')}`),
        text.value,
        fc.constantFrom('v1,', 'v1', ' ', 'v2,AAAA', 'v1,====', 't=1,v1=abc', 'v1a,AAAA', 'V1,AAAA'),
      )
      .map((signature) => (d: WireDelivery) => setHeader(d, 'webhook-signature', signature)),
    // A valid signature in a scheme jobhook does not accept, beside garbage.
    fc.constant((d: WireDelivery) =>
      setHeader(d, 'webhook-signature', String(d.headers['webhook-signature']).replace('v1,', 'v1a,')),
    ),
  );
}

/** A recipe: fast-check generates and shrinks it; `build` turns it into bytes with fresh ids. */
export type Recipe =
  | { kind: 'valid'; variant: 'completed' | 'failed' | 'rotation' | 'extra-fields' | 'unknown-type' }
  | { kind: 'mutated'; mutations: Mutation[] }
  | { kind: 'random'; method: string; headers: Record<string, string | string[]>; body: Uint8Array }
  | { kind: 'wrong-secret'; secret: string }
  | { kind: 'stale'; shift: number }
  | { kind: 'bad-body'; body: Uint8Array }
  | { kind: 'wrong-method'; method: string };

const METHODS = ['GET', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

export function recipes(text: TextArbitraries): fc.Arbitrary<Recipe> {
  const headerValue = fc.oneof(
    { weight: 4, arbitrary: text.value },
    { weight: 1, arbitrary: fc.array(text.value, { minLength: 1, maxLength: 3 }) },
  );
  const headerName = fc.oneof(
    fc.constantFrom(
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
      'Webhook-Signature',
      'content-type',
    ),
    text.name,
  );
  const bytes = fc.oneof(
    fc.uint8Array({ maxLength: 512 }),
    fc.string({ maxLength: 256 }).map((s) => Buffer.from(s)),
    fc.json({ maxDepth: 3 }).map((s) => Buffer.from(s)),
  );
  return fc.oneof(
    {
      weight: 2,
      arbitrary: fc
        .constantFrom('completed', 'failed', 'rotation', 'extra-fields', 'unknown-type')
        .map((variant) => ({ kind: 'valid' as const, variant })),
    },
    {
      weight: 5,
      arbitrary: fc
        .array(mutations(text), { minLength: 1, maxLength: 3 })
        .map((list) => ({ kind: 'mutated' as const, mutations: list })),
    },
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant('random' as const),
        method: fc.constantFrom('POST', 'POST', 'POST', ...METHODS),
        headers: fc.dictionary(headerName, headerValue, { maxKeys: 6 }),
        body: bytes,
      }),
    },
    {
      weight: 2,
      arbitrary: fc
        .oneof(
          fc.string({ minLength: 1, maxLength: 40 }),
          fc
            .uint8Array({ minLength: 1, maxLength: 40 })
            .map((b) => `whsec_${Buffer.from(b).toString('base64')}`),
        )
        .filter((secret) => secret !== SECRET)
        .map((secret) => ({ kind: 'wrong-secret' as const, secret })),
    },
    {
      weight: 2,
      arbitrary: fc
        .oneof(
          fc.integer({ min: TOLERANCE + 1, max: 10 ** 9 }),
          fc.integer({ min: -NOW, max: -(TOLERANCE + 1) }),
        )
        .map((shift) => ({ kind: 'stale' as const, shift })),
    },
    {
      weight: 2,
      arbitrary: fc
        .oneof(
          bytes,
          // JSON, but not the schema: wrong types, missing fields, arrays, scalars.
          fc
            .constantFrom(
              '[]',
              'null',
              '1',
              '"job.completed"',
              '{}',
              '{"type":1}',
              '{"type":"job.completed"}',
              '{"type":"job.completed","id":"e","created_at":"x","data":{"task_id":1}}',
              '{"type":"job.failed","id":"e","created_at":"2026-11-21T10:00:00Z","data":{"task_id":"t","status":"failed"}}',
              '{"type":"__proto__","__proto__":{"polluted":true}}',
            )
            .map((s) => Buffer.from(s)),
        )
        .filter((body) => !isDispatchable(body))
        .map((body) => ({ kind: 'bad-body' as const, body })),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(...METHODS).map((method) => ({ kind: 'wrong-method' as const, method })),
    },
  );
}

/** A random body that happens to be a JSON object with a string `type` would be answered 200. */
function isDispatchable(body: Uint8Array): boolean {
  try {
    const value: unknown = JSON.parse(Buffer.from(body).toString('utf8'));
    return (
      typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string'
    );
  } catch {
    return false;
  }
}

let serial = 0;

/** Builds one recipe into a delivery, signed at `NOW` with the suites' secret unless the recipe says otherwise. */
export function build(recipe: Recipe): Built {
  const eventId = `evt_hostile_${++serial}`;
  const sign = (payload: unknown, options: { secret?: string; timestamp?: number } = {}) => {
    const signed = signDelivery({
      secret: options.secret ?? SECRET,
      payload,
      timestamp: options.timestamp ?? NOW,
    });
    const body = typeof signed.body === 'string' ? Buffer.from(signed.body) : Buffer.from(signed.body);
    return { method: 'POST', headers: signed.headers as Record<string, string | string[]>, body };
  };
  switch (recipe.kind) {
    case 'valid': {
      const payload =
        recipe.variant === 'failed'
          ? failed({ id: eventId })
          : recipe.variant === 'unknown-type'
            ? { id: eventId, type: 'job.started', created_at: '2026-11-21T10:00:00Z', data: {} }
            : completed({ id: eventId });
      // Unknown fields are kept; keys that name prototypes must stay plain data.
      const delivery =
        recipe.variant === 'extra-fields'
          ? sign(
              JSON.stringify({ ...payload, extra: { nested: [1, { deep: true }] } }).replace(
                /}$/,
                ',"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}',
              ),
            )
          : sign(payload);
      if (recipe.variant === 'rotation') {
        // Key rotation: an unknown signature first, the valid one after it.
        const valid = String(delivery.headers['webhook-signature']);
        delivery.headers['webhook-signature'] = `v1,${Buffer.alloc(32, 7).toString('base64')} ${valid}`;
      }
      return { kind: 'valid', eventId, delivery };
    }
    case 'mutated': {
      const original = sign(completed({ id: eventId }));
      const mutated = recipe.mutations.reduce<WireDelivery>((d, mutate) => mutate(d), original);
      // Mutations can cancel out (append, then cut back to the original length): what is left is
      // the valid delivery, and must be dispatched like one.
      const unchanged =
        Buffer.compare(Buffer.from(mutated.body), original.body) === 0 &&
        SIGNED_HEADERS.every((name) => mutated.headers[name] === original.headers[name]);
      return unchanged
        ? { kind: 'valid', eventId, delivery: mutated }
        : { kind: 'mutated', delivery: mutated };
    }
    case 'random':
      return {
        kind: 'random',
        delivery: { method: recipe.method, headers: recipe.headers, body: recipe.body },
      };
    case 'wrong-secret':
      return { kind: 'wrong-secret', delivery: sign(completed({ id: eventId }), { secret: recipe.secret }) };
    case 'stale':
      return { kind: 'stale', delivery: sign(completed({ id: eventId }), { timestamp: NOW + recipe.shift }) };
    case 'bad-body':
      return { kind: 'bad-body', delivery: sign(recipe.body) };
    case 'wrong-method':
      return {
        kind: 'wrong-method',
        delivery: { ...sign(completed({ id: eventId })), method: recipe.method },
      };
  }
}
