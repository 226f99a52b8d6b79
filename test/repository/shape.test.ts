// The shape the code keeps (issue 34): few tiny files, comments that say why rather than
// measurement history, and the sync/async dual form in a handful of places only. (Its cap on the
// number of files has gone: files of one idea each matter more than how many there are.)
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

const files = [...sources('src'), ...sources('adapters')].map((path) => ({
  path,
  lines: readFileSync(path, 'utf8').split('\n').slice(0, -1),
}));
const commentLine = /^\s*(\/\/|\/\*|\*)/;

describe('the shape of src and adapters', () => {
  it('at most 5 source files of 20 lines or fewer', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(
      files.filter((file) => file.lines.length <= 20).map((file) => file.path).length,
    ).toBeLessThanOrEqual(5);
  });

  it('comment-only lines are at most 12 % of all lines, and none cites a measurement', () => {
    const all = files.flatMap((file) => file.lines);
    const comments = all.filter((line) => commentLine.test(line));
    expect(comments.length / all.length).toBeLessThanOrEqual(0.12);
    const citing = files.flatMap((file) =>
      file.lines
        .filter((line) => commentLine.test(line) && /µs|microsecond|\bns\b|bench\/NOTES|NOTES\.md/.test(line))
        .map((line) => `${file.path}: ${line.trim()}`),
    );
    expect(citing).toEqual([]);
  });

  // whenSettled (the pipeline's steps and the task's outcome gate go through it), the store call,
  // the answer at once, the signer (docs/design.md, "A value, or a promise"). The verifier's
  // verdict, which paid nothing, is always awaited.
  it('a value that may be a promise is told from one in at most 4 places', () => {
    const sites = files.flatMap((file) =>
      file.lines
        .filter(
          (line) => /isThenable\(|instanceof Promise/.test(line) && !/export function isThenable/.test(line),
        )
        .map((line) => `${file.path}: ${line.trim()}`),
    );
    expect(sites.length, sites.join('\n')).toBeLessThanOrEqual(4);
  });
});
