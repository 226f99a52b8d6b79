// The README's quick start is what users copy first: its code type-checks in strict TypeScript as
// written, and it registers the webhook the safe way (a failure is caught, never left to reject
// unhandled and stop the server).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { root } from '../support/dist.js';
import { typeCheck } from '../repository/code-blocks.js';

async function quickStartBlocks(): Promise<string[]> {
  const readme = await readFile(join(root, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Quick start');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  return [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);
}

test('registers after listening and catches the registration failure', async () => {
  const [app] = await quickStartBlocks();
  expect(app).toMatch(/\.listen\([\s\S]*\.register\(/);
  expect(app).toMatch(/\.register\([\s\S]*\.catch\(/);
});

test('type-checks in strict TypeScript as written', async () => {
  const [app, ...rest] = await quickStartBlocks();
  expect(rest.length).toBeGreaterThanOrEqual(1);
  // Each block a module of its own; the later ones use what the first declares, and `prompt`,
  // which stands for the user's input.
  const output = await typeCheck('quick-start', [`${app}\nexport { client, receiver };`, ...rest], {
    client: "import { client } from './block-1.js';",
    receiver: "import { receiver } from './block-1.js';",
    prompt: 'declare const prompt: string;',
  });
  expect(output).toBe('');
}, 180_000); // a compile: bounded to end a hang, not to time it on a busy machine
