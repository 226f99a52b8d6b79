// The hand-off engines wait and back off through src/common/backoff.ts only: no timer of their
// own (setTimeout, node:timers/promises) and no doubling written out (`2 **`, `* 2`), so that
// every retry loop's pauses come from one formula and one sleep. The pauses themselves are those
// the engines had before they shared it (test/handoff/backoffs.test.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const FOLDERS = ['src/bullmq', 'src/pg-boss', 'src/nats', 'src/handoff'];
const OWN_WAITS: readonly RegExp[] = [/\bsetTimeout\(/, /timers\/promises/, /\*\*/, /\*\s*2\b/];

/** The code of a file without its comments (a URL's `//` is kept). */
const code = (text: string) =>
  text
    .replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, ''))
    .replace(/(^|[^:])\/\/.*$/gm, '$1');

/** Each line of `folders` that waits or backs off on its own, as `file:line: code`. */
export function ownWaits(folders: readonly string[]): string[] {
  const found: string[] = [];
  for (const folder of folders) {
    for (const entry of readdirSync(join(ROOT, folder), { withFileTypes: true, recursive: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
      const file = join(entry.parentPath, entry.name);
      code(readFileSync(file, 'utf8'))
        .split('\n')
        .forEach((line, i) => {
          if (OWN_WAITS.some((pattern) => pattern.test(line))) {
            found.push(`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
          }
        });
    }
  }
  return found;
}

describe('one back-off', () => {
  it('the hand-off engines take their pauses from backoffDelay and wait with sleep', () => {
    expect(ownWaits(FOLDERS)).toEqual([]);
  });

  it('the check finds a sleep or a doubling of its own', () => {
    expect(code('await new Promise((r) => setTimeout(r, 5)); // setTimeout(')).toMatch(OWN_WAITS[0]!);
    expect(OWN_WAITS.some((pattern) => pattern.test(code('/** 2 ** 3 */ const url = "a://b";')))).toBe(false);
    expect(OWN_WAITS.some((pattern) => pattern.test('pause = Math.min(pause * 2, 1000);'))).toBe(true);
  });
});
