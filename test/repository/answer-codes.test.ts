// The README's answers table is the users' list of what a receiver can say: it must name every
// code the code can give, and the code must give no other.
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { ANSWER_CODES, answers } from '../../src/wire/answers.js';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const section = readme.slice(
  readme.indexOf('\n## Answers'),
  readme.indexOf('\n## ', readme.indexOf('\n## Answers') + 1),
);

test('the README answers table lists every answer code', () => {
  const listed = new Set([...section.matchAll(/`([a-z_]+)`/g)].map((match) => match[1]));
  expect(ANSWER_CODES.filter((code) => !listed.has(code))).toEqual([]);
});

test('every answer the receiver can build carries a listed code and a JSON body', () => {
  for (const [name, build] of Object.entries(answers)) {
    const response = (build as (...args: unknown[]) => { status: number; body: string })('no_match', 1);
    const body = JSON.parse(response.body) as { ok: boolean; error?: { code: string } };
    if (response.status >= 300) expect(ANSWER_CODES, name).toContain(body.error?.code);
    else expect(body.ok, name).toBe(true);
  }
});
