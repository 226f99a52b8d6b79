// The README's quick start is what users copy first: its code type-checks in strict TypeScript as
// written, and it registers the webhook the safe way (a failure is caught, never left to reject
// unhandled and stop the server).
import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, test } from 'vitest';
import { root } from '../support/dist.js';

const scratch = join(root, 'node_modules', '.cache', `jobhook-quick-start-${process.pid}`);
afterAll(() => rm(scratch, { recursive: true, force: true }));

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
  const blocks = await quickStartBlocks();
  expect(blocks.length).toBeGreaterThanOrEqual(2);
  await mkdir(scratch, { recursive: true });
  // Each block a module of its own; the later ones use what the first declares, and `prompt`,
  // which stands for the user's input.
  const [app, ...rest] = blocks;
  await writeFile(join(scratch, 'app.ts'), `${app}\nexport { client, receiver };\n`);
  await writeFile(
    join(scratch, 'later.ts'),
    `import { client, receiver } from './app.js';\ndeclare const prompt: string;\n${rest.join('\n')}\nexport {};\n`,
  );
  await writeFile(
    join(scratch, 'tsconfig.json'),
    JSON.stringify({
      extends: join(root, 'tsconfig.json'),
      compilerOptions: { noEmit: true, baseUrl: root },
      include: [],
      files: ['app.ts', 'later.ts'],
    }),
  );
  const tsc = join(root, 'node_modules/typescript/bin/tsc');
  const result = await promisify(execFile)(process.execPath, [tsc, '-p', scratch]).catch(
    (error: { stdout: string }) => ({ stdout: error.stdout }),
  );
  expect(result.stdout).toBe('');
}, 180_000); // a compile: bounded to end a hang, not to time it on a busy machine
