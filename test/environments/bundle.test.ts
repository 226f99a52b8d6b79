// A receiver-only app must not carry the gateway client: bundlers drop what an app does not
// import only if the receiver core never imports the client, directly or lazily.
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILD_TIMEOUT_MS, ensureDist, root } from '../support/dist.js';

let scratch: string;

beforeAll(async () => {
  await ensureDist();
  scratch = await mkdtemp(join(tmpdir(), 'jobhook-bundle-'));
  // Resolve `jobhook` as an installed package does: through its `exports` map.
  await symlink(root, join(scratch, 'jobhook'), 'dir');
}, BUILD_TIMEOUT_MS);

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** Bundles `source` for Node, minified, and returns the code and its size in bytes. */
async function bundle(source: string) {
  const entry = join(scratch, `app-${Math.random().toString(36).slice(2)}.mjs`);
  await writeFile(entry, source);
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    minify: true,
    write: false,
    platform: 'node',
    format: 'esm',
    nodePaths: [scratch],
    external: ['zod'],
    logLevel: 'silent',
  });
  const code = result.outputFiles[0]!.text;
  return { code, bytes: Buffer.byteLength(code) };
}

// Strings only the client (or its registration) contains.
const CLIENT_MARKERS = ['/api/v1/webhooks', 'GatewayError', 'https://gateway.example.com'];

describe('a minimal receiver app, bundled with esbuild', () => {
  it('contains no gateway client code', async () => {
    const receiverOnly = await bundle(`
      import { createReceiver } from 'jobhook';
      const receiver = createReceiver({ secret: process.env.WEBHOOK_SECRET });
      receiver.onJobCompleted((event) => console.log(event.data.image_url));
      export default { fetch: receiver.fetch };
    `);
    for (const marker of CLIENT_MARKERS) expect(receiverOnly.code).not.toContain(marker);

    // The markers do find the client when an app does import it, so their absence above means something.
    const withClient = await bundle(`
      import { createReceiver } from 'jobhook';
      import { createClient } from 'jobhook/client';
      const receiver = createReceiver({ secret: process.env.WEBHOOK_SECRET });
      await receiver.register({ client: createClient({ apiKey: 'k', baseUrl: 'https://g.test' }), url: 'https://a.test' });
    `);
    for (const marker of CLIENT_MARKERS) expect(withClient.code).toContain(marker);
    console.log(
      `minimal receiver app: ${receiverOnly.bytes} bytes minified (zod external); with the client: ${withClient.bytes}`,
    );
  }, 120_000); // two esbuild bundles: bounded to end a hang, not to time them on a busy machine
});
