// The code blocks of a Markdown page, and a type-check of TypeScript blocks as the page writes
// them: shared by the tests that hold a page's code to what runs or compiles.
import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { root } from '../support/dist.js';

/** A fenced block: its language (`ts`, `nginx`, …) and its text. */
export interface CodeBlock {
  lang: string;
  code: string;
}

/** Every fenced code block of `page` (a path from the repository's root), in order. */
export async function codeBlocks(page: string): Promise<CodeBlock[]> {
  const text = await readFile(join(root, page), 'utf8');
  return [...text.matchAll(/^```([a-z]*)\n([\s\S]*?)^```$/gm)].map(([, lang, code]) => ({
    lang: lang!,
    code: code!,
  }));
}

/** The names a block declares or imports itself. */
function declaredIn(code: string): Set<string> {
  const names = new Set<string>();
  for (const [, name] of code.matchAll(/\b(?:const|let|function|class)\s+([A-Za-z_$][\w$]*)/g))
    names.add(name!);
  for (const [, list] of code.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}/g)) {
    for (const item of list!.split(',')) {
      const name = item
        .replace(/\btype\b/, '')
        .split(/\bas\b/)
        .pop()!
        .trim();
      if (name) names.add(name);
    }
  }
  for (const [, name] of code.matchAll(/import\s+([A-Za-z_$][\w$]*)\s+from/g)) names.add(name!);
  return names;
}

/**
 * Type-checks each block as a module of its own in strict TypeScript (the repository's
 * tsconfig), preceded by the lines of `context` (name → an import or a declaration) for the names
 * it uses without declaring them: what the page leaves to the reader's app. Resolves with tsc's
 * output, empty when every block compiles.
 */
export async function typeCheck(
  name: string,
  blocks: readonly string[],
  context: Readonly<Record<string, string>>,
): Promise<string> {
  const scratch = join(root, 'node_modules', '.cache', `jobhook-docs-${name}-${process.pid}`);
  await mkdir(scratch, { recursive: true });
  try {
    const files = await Promise.all(
      blocks.map(async (code, index) => {
        const own = declaredIn(code);
        const needed = Object.entries(context)
          .filter(
            ([used]) => !own.has(used) && new RegExp(`(?<![\\w$.])${used.replace('$', '\\$')}\\b`).test(code),
          )
          .map(([, line]) => line);
        const file = `block-${index + 1}.ts`;
        await writeFile(join(scratch, file), `${needed.join('\n')}\n${code}\nexport {};\n`);
        return file;
      }),
    );
    await writeFile(
      join(scratch, 'tsconfig.json'),
      JSON.stringify({
        extends: join(root, 'tsconfig.json'),
        compilerOptions: { noEmit: true, baseUrl: root },
        include: [],
        files,
      }),
    );
    const tsc = join(root, 'node_modules/typescript/bin/tsc');
    const result = await promisify(execFile)(process.execPath, [tsc, '-p', scratch]).catch(
      (error: { stdout: string }) => ({ stdout: error.stdout }),
    );
    return result.stdout;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
