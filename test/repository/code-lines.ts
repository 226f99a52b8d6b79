// The lines of the project's own code that match a pattern, comments left out: what the "one
// implementation" tests (one back-off, one deadline) look for.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The code of a file without its comments (a URL's `//` is kept). */
export const withoutComments = (text: string) =>
  text
    .replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, ''))
    .replace(/(^|[^:])\/\/.*$/gm, '$1');

/** Each line of the `.ts` files under `folders` that matches one of `patterns`, as `file:line: code`. */
export function codeLines(
  folders: readonly string[],
  patterns: readonly RegExp[],
  { except = [] }: { except?: readonly string[] } = {},
): string[] {
  const found: string[] = [];
  for (const folder of folders) {
    for (const entry of readdirSync(join(ROOT, folder), { withFileTypes: true, recursive: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
      const file = relative(ROOT, join(entry.parentPath, entry.name));
      if (except.includes(file)) continue;
      withoutComments(readFileSync(join(ROOT, file), 'utf8'))
        .split('\n')
        .forEach((line, i) => {
          if (patterns.some((pattern) => pattern.test(line))) found.push(`${file}:${i + 1}: ${line.trim()}`);
        });
    }
  }
  return found;
}
