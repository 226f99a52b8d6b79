// The entry points the README's Packaging section and the API reference's overview list are the
// package's: every subpath of package.json `exports`, and nothing else, so that a new entry point
// cannot ship without the two lists that tell users it exists.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { entryNames as builtEntries } from '../support/dist.js';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

/** `jobhook`, `jobhook/express`, …: the subpaths of package.json `exports`, as users import them. */
const exported = Object.keys((JSON.parse(read('package.json')) as { exports: object }).exports)
  .filter((subpath) => subpath !== './package.json')
  .map((subpath) => (subpath === '.' ? 'jobhook' : `jobhook/${subpath.slice(2)}`))
  .sort();

/** The text of the section under the heading that starts with `heading`, up to the next `## `. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n## ${heading}`);
  expect(start, `no "## ${heading}" heading`).toBeGreaterThan(-1);
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end === -1 ? undefined : end);
}

/** Every `jobhook` or `jobhook/<subpath>` written as code in `text`. */
function entryNames(text: string): string[] {
  const names = [...text.matchAll(/`(jobhook(?:\/[\w-]+)?)`/g)].map(([, name]) => name!);
  return [...new Set(names)].sort();
}

describe('the lists of entry points', () => {
  it('package.json exports the entry points the lists are checked against', () => {
    expect(exported).toContain('jobhook');
    expect(exported).toContain('jobhook/client');
    expect(exported.length).toBeGreaterThan(10);
  });

  it("README.md's Packaging section names every entry point, and no other", () => {
    expect(entryNames(section(read('README.md'), 'Packaging'))).toEqual(exported);
  });

  it("docs/api-overview.md's table has a row for every entry point, and no other", () => {
    const table = section(read('docs/api-overview.md'), 'The entry points');
    const rows = [...table.matchAll(/^\| `(jobhook(?:\/[\w-]+)?)` +\|/gm)].map(([, name]) => name!);
    expect(rows.sort()).toEqual(exported);
  });

  it('the built entries the tests check (test/support/dist.ts) are every entry point, and no other', () => {
    const names = builtEntries.map((name) => (name === 'index' ? 'jobhook' : `jobhook/${name}`));
    expect(names.sort()).toEqual(exported);
  });

  it('reads entry points the way the lists write them', () => {
    expect(entryNames('`jobhook`, `jobhook/pg-boss` and jobhook/nats')).toEqual([
      'jobhook',
      'jobhook/pg-boss',
    ]);
  });
});
