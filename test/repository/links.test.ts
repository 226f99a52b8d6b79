// README.md is read on the npm page and in node_modules, where only the packed files exist: each of
// its links must be absolute to this repository (and name a file and heading that exist here), or
// relative to a file the tarball ships. The other Markdown pages are read on GitHub, where relative
// links work: each must name a file and heading that exist.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { root } from '../support/dist.js';

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  repository?: { url?: string };
  homepage?: string;
};
const repository = 'https://github.com/jobhook/jobhook';
const blob = `${repository}/blob/main/`;
const tree = `${repository}/tree/main/`;
const raw = 'https://raw.githubusercontent.com/jobhook/jobhook/main/';

/** Every link and image target in a Markdown text, outside fenced code blocks. */
function linksOf(markdown: string): string[] {
  const prose = markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');
  return [...prose.matchAll(/!?\[(?:[^\]]|\][^(])*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map(
    (match) => match[1]!,
  );
}

/** The anchors GitHub gives a Markdown file's headings. */
function anchorsOf(markdown: string): Set<string> {
  const prose = markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of prose.matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = heading!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .trim()
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** Why a link to `path` (relative to the repository root) with `anchor` does not resolve, if it does not. */
function problemWith(path: string, anchor: string | undefined): string | undefined {
  const file = join(root, decodeURIComponent(path));
  if (!existsSync(file)) return `no file ${path}`;
  if (anchor && path.endsWith('.md') && !anchorsOf(readFileSync(file, 'utf8')).has(anchor)) {
    return `no heading #${anchor} in ${path}`;
  }
  return undefined;
}

function split(target: string): [string, string | undefined] {
  const hash = target.indexOf('#');
  return hash === -1 ? [target, undefined] : [target.slice(0, hash), target.slice(hash + 1)];
}

describe('README.md', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const links = linksOf(readme);

  it('names the repository and homepage its absolute links point to', () => {
    expect(pkg.repository?.url).toBe(`git+${repository}.git`);
    expect(pkg.homepage).toBe(`${repository}#readme`);
  });

  it('links only to files and headings that exist, absolutely or within the packed tarball', async () => {
    expect(links.length).toBeGreaterThan(10);
    const relativeLinks = links.filter((link) => !/^[a-z]+:/.test(link) && !link.startsWith('#'));
    // npm pack lists what the tarball would hold, without running a build; asked only when needed.
    const packed = relativeLinks.length === 0 ? new Set<string>() : await packedFiles();
    const problems: string[] = [];
    for (const link of links) {
      const [path, anchor] = split(link);
      let problem: string | undefined;
      if (path === '') problem = anchorsOf(readme).has(anchor!) ? undefined : `no heading #${anchor}`;
      else if (path.startsWith(blob)) problem = problemWith(path.slice(blob.length), anchor);
      else if (path.startsWith(tree)) problem = problemWith(path.slice(tree.length), undefined);
      else if (path.startsWith(raw)) problem = problemWith(path.slice(raw.length), undefined);
      else if (path.startsWith(repository))
        problem = 'a repository link that is not blob/main, tree/main or raw';
      else if (/^https?:/.test(path))
        problem = undefined; // another site
      else if (/^[a-z]+:/.test(path)) problem = 'an unknown scheme';
      else problem = packed.has(path) ? problemWith(path, anchor) : `${path} is not in the packed tarball`;
      if (problem) problems.push(`${link}: ${problem}`);
    }
    expect(problems).toEqual([]);
  });
});

async function packedFiles(): Promise<Set<string>> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
  const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: root,
    env,
  });
  const [result] = JSON.parse(stdout) as [{ files: { path: string }[] }];
  return new Set(result.files.map((file) => file.path));
}

describe('the docs pages the tarball ships', () => {
  // The README links to docs/ relatively: on GitHub, in a clone and in node_modules alike (the
  // registry's page sends relative links to the repository). So docs/ is packed, and each page's
  // links must hold in the tarball too: to a packed file, or absolute to this repository.
  it('are packed, and link only to packed files or absolutely', async () => {
    const packed = await packedFiles();
    const pages = readdirSync(join(root, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`);
    expect(pages.filter((page) => !packed.has(page))).toEqual([]);
    const readme = linksOf(readFileSync(join(root, 'README.md'), 'utf8'));
    expect(readme.filter((link) => link.startsWith(`${blob}docs/`))).toEqual([]);
    const problems: string[] = [];
    for (const page of pages) {
      for (const link of linksOf(readFileSync(join(root, page), 'utf8'))) {
        const [path] = split(link);
        if (path === '' || /^[a-z]+:/.test(path)) continue;
        const target = relative(root, join(root, dirname(page), decodeURIComponent(path)));
        if (!packed.has(target)) problems.push(`${page}: ${link} is not in the packed tarball`);
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('the other Markdown pages', () => {
  const pages = [
    'CONTRIBUTING.md',
    'test/README.md',
    ...readdirSync(join(root, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`),
  ].filter((page) => existsSync(join(root, page)));

  it.each(pages)('%s links only to files and headings that exist', (page) => {
    const text = readFileSync(join(root, page), 'utf8');
    const problems: string[] = [];
    for (const link of linksOf(text)) {
      const [path, anchor] = split(link);
      let problem: string | undefined;
      if (/^[a-z]+:/.test(path)) continue; // absolute: another site
      if (path === '') problem = anchorsOf(text).has(anchor!) ? undefined : `no heading #${anchor}`;
      else problem = problemWith(relative(root, join(root, dirname(page), path)), anchor);
      if (problem) problems.push(`${link}: ${problem}`);
    }
    expect(problems).toEqual([]);
  });
});
