// The TypeScript these pages show compiles in strict TypeScript as written, against the package's
// own types: an option renamed or a type changed fails here, not in a reader's editor.
import { expect, test } from 'vitest';
import { codeBlocks, typeCheck } from './code-blocks.js';

const PAGES = [
  'docs/production.md',
  'docs/events-and-signatures.md',
  'docs/observability.md',
  'docs/sqlite.md',
  'docs/inbox.md',
];

/** What the pages leave to the reader's app: each line is added to a block that uses the name. */
const APP = {
  express: "import express from 'express';",
  createReceiver: "import { createReceiver } from 'jobhook';",
  expressHandler: "import { expressHandler } from 'jobhook/express';",
  createClient: "import { createClient } from 'jobhook/client';",
  redisDedupeStore: "import { redisDedupeStore } from 'jobhook/redis';",
  redisJobTracker: "import { redisJobTracker } from 'jobhook/redis';",
  secret: 'declare const secret: string;',
  redis: "declare const redis: import('ioredis').Redis;",
  app: "declare const app: import('express').Express;",
  server: "declare const server: import('node:http').Server;",
  receiver: "declare const receiver: import('jobhook').Receiver;",
  client: "declare const client: import('jobhook/client').GatewayClient;",
  mySchemeAccepts:
    'declare function mySchemeAccepts(signature: string, body: Uint8Array, secret: string): boolean;',
  accounts:
    'declare const accounts: { find(id: string | undefined): Promise<Account | undefined>; all(): Promise<Account[]> };\n' +
    'interface Account { id: string; webhookSecrets: string[] }',
  clientFor: "declare function clientFor(account: { id: string }): import('jobhook/client').GatewayClient;",
  saveImage: 'declare function saveImage(tenant: string, taskId: string, imageUrl: string): Promise<void>;',
  pager: 'declare const pager: { alert(message: string): Promise<void> };',
};

test('the TypeScript blocks of the pages compile as written', async () => {
  const blocks = (await Promise.all(PAGES.map(codeBlocks))).flat().filter((block) => block.lang === 'ts');
  expect(blocks.length).toBeGreaterThanOrEqual(12);
  const output = await typeCheck(
    'pages',
    blocks.map((block) => block.code),
    APP,
  );
  expect(output).toBe('');
}, 180_000); // a compile: bounded to end a hang, not to time it on a busy machine
