/**
 * What jobhook adds to an app's type-check: `tsc --noEmit` of a small app with a handler for every
 * event, with jobhook (its published types, dist/ as installed) and without it (the same app with
 * hand-written types and verification), several runs each; prints the medians and the difference.
 * For reference it also times the app without jobhook importing zod 4, which is what jobhook's
 * types cost while they were inferred from its zod schemas.
 *
 *   npx tsx bench/typecheck.ts            # 7 runs each; TYPECHECK_RUNS=n for another count
 *
 * Not part of `npm run bench`: each run is a whole compiler start (about 2 s).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ensureDist } from '../test/support/dist.js';

const root = resolve(import.meta.dirname, '..');
const runs = Number(process.env.TYPECHECK_RUNS ?? 7);
const tsc = join(root, 'node_modules/typescript/bin/tsc');

const handlers = `
receiver.onJobCompleted((event) => {
  console.log(event.data.task_id, event.data.image_url.length);
});
receiver.onJobFailed((event) => {
  console.log(event.data.task_id, event.data.error.code, event.data.error.message);
});
receiver.onAny((event) => {
  if (event.type === 'job.completed') console.log(event.created_at, event.data.image_url);
});
`;

const apps = {
  'with jobhook': `
import http from 'node:http';
import { createReceiver } from 'jobhook';
import { nodeHandler } from 'jobhook/node';

const receiver = createReceiver({ secret: process.env.WEBHOOK_SECRET ?? '' });
${handlers}
http.createServer(nodeHandler(receiver, { path: '/webhooks' })).listen(3000);
`,
  'without jobhook': `
import http from 'node:http';
import { createHmac, timingSafeEqual } from 'node:crypto';

interface JobCompletedEvent { id: string; type: 'job.completed'; created_at: string;
  data: { task_id: string; status: 'completed'; image_url: string } }
interface JobFailedEvent { id: string; type: 'job.failed'; created_at: string;
  data: { task_id: string; status: 'failed'; error: { code: string; message: string } } }
type Event = JobCompletedEvent | JobFailedEvent;
type Handler<E> = (event: E) => unknown;
const handlers: { completed: Handler<JobCompletedEvent>[]; failed: Handler<JobFailedEvent>[]; any: Handler<Event>[] } =
  { completed: [], failed: [], any: [] };
const receiver = {
  onJobCompleted: (h: Handler<JobCompletedEvent>) => handlers.completed.push(h),
  onJobFailed: (h: Handler<JobFailedEvent>) => handlers.failed.push(h),
  onAny: (h: Handler<Event>) => handlers.any.push(h),
};
${handlers}
const secret = Buffer.from(process.env.WEBHOOK_SECRET ?? '');
http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const id = String(req.headers['webhook-id']);
    const timestamp = String(req.headers['webhook-timestamp']);
    const expected = createHmac('sha256', secret).update(id + '.' + timestamp + '.').update(body).digest();
    const given = Buffer.from(String(req.headers['webhook-signature']).slice(3), 'base64');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return res.writeHead(401).end();
    const event = JSON.parse(body.toString('utf8')) as Event;
    if (event.type === 'job.completed') handlers.completed.forEach((h) => h(event));
    else handlers.failed.forEach((h) => h(event));
    handlers.any.forEach((h) => h(event));
    res.writeHead(200).end();
  });
}).listen(3000);
`,
};
const withZod = `import { z } from 'zod';\nexport const schema = z.looseObject({ id: z.string() });\n${apps['without jobhook']}`;

await ensureDist();
const dir = mkdtempSync(join(tmpdir(), 'jobhook-typecheck-'));
try {
  // jobhook as installed: package.json and dist/ only; its dependency zod and @types/node beside it.
  const installed = join(dir, 'node_modules/jobhook');
  mkdirSync(installed, { recursive: true });
  cpSync(join(root, 'package.json'), join(installed, 'package.json'));
  cpSync(join(root, 'dist'), join(installed, 'dist'), { recursive: true });
  for (const name of ['zod', '@types/node', 'undici-types']) {
    mkdirSync(join(dir, 'node_modules', name, '..'), { recursive: true });
    symlinkSync(join(root, 'node_modules', name), join(dir, 'node_modules', name));
  }
  const projects: Record<string, string> = { ...apps, 'without jobhook, importing zod 4': withZod };
  const entries = Object.entries(projects).map(([name, source], index) => {
    const project = join(dir, `app${index}`);
    mkdirSync(project);
    writeFileSync(join(project, 'app.ts'), source);
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'es2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          strict: true,
          noEmit: true,
          skipLibCheck: true, // what most apps use; without it every .d.ts is checked, jobhook's too
          types: ['node'],
        },
        files: ['app.ts'],
      }),
    );
    return { name, project, times: [] as number[], files: 0 };
  });
  // Round-robin, so that a burst of load on a shared machine slows every app alike.
  for (let run = 0; run < runs; run++) {
    for (const entry of entries) {
      const started = process.hrtime.bigint();
      const output = execFileSync(process.execPath, [tsc, '-p', entry.project, '--extendedDiagnostics'], {
        encoding: 'utf8',
      });
      entry.times.push(Number(process.hrtime.bigint() - started) / 1e9);
      entry.files = Number(/^Files:\s+(\d+)/m.exec(output)?.[1] ?? 0);
    }
  }
  const results = entries.map(({ name, times, files }) => {
    times.sort((a, b) => a - b);
    return { name, median: times[Math.floor(times.length / 2)]!, min: times[0]!, files };
  });
  const base = results[1]!;
  console.log(`tsc --noEmit of a small app, ${runs} runs each (TypeScript ${tscVersion()}):`);
  for (const { name, median, min, files } of results) {
    const delta =
      name === base.name
        ? ''
        : `  ${median - base.median >= 0 ? '+' : ''}${(median - base.median).toFixed(2)} s`;
    console.log(
      `  ${name.padEnd(34)} median ${median.toFixed(2)} s (min ${min.toFixed(2)} s), ${files} files${delta}`,
    );
  }
  const added = results[0]!.median - base.median;
  console.log(
    `jobhook adds ${added.toFixed(2)} s (goal: at most 0.30 s): ${added <= 0.3 ? 'met' : 'missed'}`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}

function tscVersion(): string {
  return execFileSync(process.execPath, [tsc, '--version'], { encoding: 'utf8' })
    .trim()
    .replace(/^Version /, '');
}
