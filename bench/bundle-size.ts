/**
 * `npx tsx bench/bundle-size.ts` (after `npm run build`): the size of a minimal Cloudflare Workers
 * app, bundled as wrangler does (esbuild, conditions `workerd`, `worker`, `browser`, no Node
 * built-ins) and minified, with jobhook against the same app verifying with `standardwebhooks` or
 * `svix`. jobhook's app also validates, deduplicates and dispatches; the others only verify.
 */
import { build } from 'esbuild';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';

/** The same app verifying with `library`'s `Webhook` (both have the same API), nothing more. */
function verifyingOnly(library: string): string {
  return `
import { Webhook } from '${library}';
export default {
  async fetch(request, env) {
    const body = await request.text();
    try {
      const event = new Webhook(env.WEBHOOK_SECRET).verify(body, Object.fromEntries(request.headers));
      console.log(event.data.image_url);
      return new Response('ok');
    } catch {
      return new Response('invalid', { status: 401 });
    }
  },
};`;
}

const apps = {
  jobhook: `
import { createReceiver } from 'jobhook';
let receiver;
export default {
  fetch(request, env) {
    receiver ??= createReceiver({ secret: env.WEBHOOK_SECRET }).onJobCompleted((event) => {
      console.log(event.data.image_url);
    });
    return receiver.fetch(request);
  },
};`,
  standardwebhooks: verifyingOnly('standardwebhooks'),
  svix: verifyingOnly('svix'),
};

const dir = mkdtempSync(join(tmpdir(), 'jobhook-bundle-size-'));
try {
  // The app's node_modules: jobhook as this repository (its package.json, so its `exports` and
  // `imports` apply), the two others from this repository's install.
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(resolve('.'), join(dir, 'node_modules', 'jobhook'), 'dir');
  for (const name of ['standardwebhooks', 'svix']) {
    symlinkSync(resolve('node_modules', name), join(dir, 'node_modules', name), 'dir');
  }
  console.log('| App (Workers, esbuild --minify) | Minified | Gzip |');
  console.log('| --- | ---: | ---: |');
  for (const [name, source] of Object.entries(apps)) {
    writeFileSync(join(dir, `${name}.mjs`), source);
    const result = await build({
      absWorkingDir: dir,
      entryPoints: [join(dir, `${name}.mjs`)],
      bundle: true,
      write: false,
      minify: true,
      format: 'esm',
      platform: 'neutral',
      mainFields: ['browser', 'module', 'main'],
      conditions: ['workerd', 'worker', 'browser'],
      target: 'es2022',
      logLevel: 'error',
      // Not this repository's tsconfig.json, whose `paths` point `#runtime` at the sources.
      tsconfigRaw: '{}',
    });
    const code = result.outputFiles[0]!.contents;
    const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
    console.log(`| ${name} | ${kb(code.byteLength)} | ${kb(gzipSync(code).byteLength)} |`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
