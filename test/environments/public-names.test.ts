// The public face, read from the sources the way a user's editor reads them: `jobhook` exports what
// an app writes and `jobhook/extend` what a plug-in implements, each listed here in full, and every
// entry point together stays small enough to hold in one's head. A new export is a decision: add
// it to its list here (and, for `jobhook`, within the budget).
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import config from '../../tsup.config.js';

/** At most this many names in `jobhook`, types included. */
const ROOT_BUDGET = 30;
/**
/**
 * At most this many distinct names across every entry point: 150, the building blocks the tools
 * wing (src/tools/: the CLI, the probe, the simulator) reaches through `jobhook/extend`, among them
 * the one description of a signature scheme (`SchemeParameters`, `schemeVerifier`),
 * jobhook/sqlite's store, tracker and inbox (each a function, its options and its resolved type),
 * the inbox's contract in `jobhook/extend`, and confirm mode's options (`ConfirmOptions`,
 * `ConfirmClient`), and the types those name (`Backoff`, the simulator's `ForeignScheme`).
 */
const DISTINCT_BUDGET = 204;

const ROOT = [
  'AnyEvent',
  'BodyReadError', // deprecated: moved to jobhook/extend, kept one version so running code keeps working
  'DefaultEvents',
  'DeliveryContext',
  'ErrorHandler',
  'EventHandler',
  'EventSchemas',
  'GATEWAY_EVENT_TYPES',
  'JobCompletedEvent',
  'JobFailedEvent',
  'JobResult',
  'JobhookError',
  'JobhookErrorCode',
  'Logger',
  'Receiver',
  'ReceiverObserver',
  'ReceiverContract',
  'ReceiverOptions',
  'ReconcileOptions',
  'SecretLookup',
  'TenantSecrets',
  'createReceiver',
  'defaultSchemas',
  'hmacSha256',
  'jobCompletedSchema',
  'jobFailedSchema',
  'memoryDedupeStore',
  'memoryJobTracker',
  'standardWebhooks',
  'stripeSignature',
];

const EXTEND = [
  // an adapter
  'AnswerCode',
  'Backoff', // the back-off an inbox's retries take (InboxRetry.backoff)
  'BodyInput',
  'BodyLimits',
  'BodyReadError',
  'BodyReader',
  'DeliveryFramework', // which framework an adapter is, so a mounting mistake is logged with its fix
  'DeliveryInput',
  'HeadersInput',
  // The inbox's contract, its rows and its replay, for an inbox of one's own.
  'Inbox',
  'InboxDelivery',
  'InboxFilter',
  'InboxOptions',
  'InboxRetry',
  'InboxSettlement',
  'InboxStatus',
  'ReplayMark',
  'ReplayOptions',
  'ReplayReport',
  'ReplayedDelivery',
  'StoredDelivery',
  'ReceiverResponse',
  // a dedupe store, a job tracker
  'ClaimDueRequest',
  'ClaimResult',
  'DedupeStore',
  'JobTracker',
  'TrackedJob',
  'TrackerTimes',
  // a signature scheme
  'CustomVerifyFunction',
  'HeaderCheckRequest',
  'RefusalCode',
  'SignInput',
  'SignedRequest',
  'Verifier',
  'VerifyFunction',
  'VerifyOutcome',
  'VerifyRefusal',
  // a hand-off and its worker
  'FailedEvent',
  'FailedEvents',
  'Handoff',
  'HandoffJob',
  'QueuedAttempt',
  'QueuedJobRunner',
  'WorkOptions',
  'WorkerHandle',
  // results, observers, the client the receiver drives, events
  'DedupeOutcome',
  'DeliveryFailures',
  'DeliveryOutcome',
  'EventMap',
  'ExpiredJob',
  'JobResults',
  'ObservedDelivery',
  'ObservedHandoff',
  'ConfirmClient',
  'ConfirmOptions',
  'ReconcileClient',
  'ReconcileObserver',
  'ReconcileResult',
  'ResultChannel',
  'SignatureAlarm',
  'StandardSchemaV1',
  'UnknownEvent',
  'WebhookRegistrar',
  // what the tools wing (the CLI, the probe, the gateway simulator) is built from
  'DeliverySigning',
  'GatewayEventType',
  'HEADER_PATH',
  'SECRET_FORMS',
  'SIGNING_SCHEMES',
  'SchemeName',
  'SchemeParameters',
  'messageOf',
  'schemeParametersOf',
  'schemeVerifier',
  'secretBytes',
  'SamplePayload',
  'SecretForm',
  'Signing',
  'canSignWith',
  'deadline',
  'isGatewayEventType',
  'isRecord',
  'limitsWithin',
  'optionChecks',
  'pathReader',
  'readBodyCapped',
  'readHeaders',
  'readRequestBody',
  'redactor',
  'resolveSigning',
  'samplePayload',
  'signedHeaders',
  'sleep',
];

/** The contracts a plug-in implements: their one home is `jobhook/extend`. */
const CONTRACTS = [
  'DedupeStore',
  'JobTracker',
  'Verifier',
  'Handoff',
  'HandoffJob',
  'FailedEvents',
  'ResultChannel',
];

/** Each public entry point's name (`index` is `jobhook`) and source, from tsup.config.ts. */
const library = (config as unknown as { entry: Record<string, string> }[])[0]!.entry;
const entries = Object.entries(library).filter(([name]) => !name.startsWith('runtime-'));

/** The names each entry point exports, types included, as the type checker sees them. */
function exportedNames(): Map<string, string[]> {
  const files = entries.map(([, path]) => fileURLToPath(new URL(`../../${path}`, import.meta.url)));
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    skipLibCheck: true,
    strict: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const names = new Map<string, string[]>();
  entries.forEach(([name], index) => {
    const module = checker.getSymbolAtLocation(program.getSourceFile(files[index]!)!);
    names.set(
      name,
      module
        ? checker
            .getExportsOfModule(module)
            .map((symbol) => symbol.name)
            .sort()
        : [],
    );
  });
  return names;
}

describe('the public names', () => {
  const names = exportedNames();

  it('reads every entry point', () => {
    expect([...names.keys()]).toEqual(
      expect.arrayContaining(['index', 'extend', 'client', 'testing', 'nats']),
    );
    expect(names.get('client')).toContain('createClient');
  });

  it(`jobhook exports what an app writes, at most ${ROOT_BUDGET} names`, () => {
    expect(names.get('index')).toEqual([...ROOT].sort());
    expect(ROOT.length).toBeLessThanOrEqual(ROOT_BUDGET);
  });

  it('jobhook/extend exports the contracts a plug-in implements', () => {
    expect(names.get('extend')).toEqual([...EXTEND].sort());
  });

  it('no other entry point re-exports a contract', () => {
    for (const [entry, exported] of names) {
      if (entry !== 'extend')
        expect(
          exported.filter((name) => CONTRACTS.includes(name)),
          entry,
        ).toEqual([]);
    }
  });

  it(`every entry point together exports at most ${DISTINCT_BUDGET} distinct names`, () => {
    const distinct = new Set([...names.values()].flat());
    expect(distinct.size).toBeLessThanOrEqual(DISTINCT_BUDGET);
  });

  it('the deprecated BodyReadError of jobhook is the class of jobhook/extend', async () => {
    const [root, extend] = await Promise.all([import('jobhook'), import('jobhook/extend')]);
    expect(root.BodyReadError).toBe(extend.BodyReadError);
    expect(new root.BodyReadError('too_large')).toBeInstanceOf(extend.BodyReadError);
  });
});
