// docs/testing-handlers.md shows two files, block by block: they are test/examples/webhooks.ts
// and webhooks.test.ts, which vitest runs. The page must show them exactly, or its code could rot
// while the tests stay green.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { root } from '../support/dist.js';
import { codeBlocks } from './code-blocks.js';

const blocks = await codeBlocks('docs/testing-handlers.md');
const read = (file: string) => readFileSync(join(root, 'test/examples', file), 'utf8');

test('every code block on the page is TypeScript from the two files', () => {
  expect(blocks.length).toBeGreaterThanOrEqual(3);
  expect(blocks.map(({ lang }) => lang).filter((lang) => lang !== 'ts')).toEqual([]);
});

test('the first block is webhooks.ts as it is', () => {
  expect(blocks[0]!.code).toBe(read('webhooks.ts'));
});

test('the other blocks, in order, are webhooks.test.ts as it is', () => {
  expect(
    blocks
      .slice(1)
      .map(({ code }) => code)
      .join('\n'),
  ).toBe(read('webhooks.test.ts'));
});
