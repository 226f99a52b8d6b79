/** Turns one run's measurements into the targets table, RESULTS.md and the SVG chart. */
import { existsSync, readFileSync } from 'node:fs';
import { cpus, freemem, platform, release, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { BEFORE, BREAKDOWN, CASES, type CoreResult } from './core.js';
import { sizeLabel } from './fixtures.js';
import { handoffRatio, type HandoffResults, type HandoffSamples, type Setup } from './handoff.js';
import { WORKER_CONCURRENCY } from './handoff-process.js';
import { cpuRatio, rpsRatio, type HttpSamples, type MemoryResult } from './http.js';
import { formatNs, median, ratio, type Samples } from './measure.js';
import { slope, type BodyScaleResult } from './scale.js';
import { BEFORE_KIND, type ServerKind } from './server.js';
import { overMemory, STORE_NAMES, type StoreResults } from './stores.js';
import { reconcileSection, type ReconcileResults } from './reconcile.js';
import { inboxSection, inboxTargets, type InboxResults } from './inbox.js';
import { confirmSection, type ConfirmResults } from './confirm.js';
import type { ApartResults } from './builds-apart.js';
import type { InstructionCase, InstructionResults } from './instructions.js';

export interface Results {
  quick: boolean;
  settings: string;
  startedAt: Date;
  /** BENCH_BASELINE: the folder of the build before, measured beside this one (bench/NOTES.md). */
  baseline?: string;
  seconds: number;
  core: CoreResult[];
  /** With BENCH_BASELINE: `receive()` of each build alone in its own process, pairs alternating. */
  apart?: ApartResults | undefined;
  /** Instructions per 1 KB delivery under callgrind (bench/instructions.ts); skipped without valgrind. */
  instructions?: InstructionResults;
  /** receive() at 1 KB with the features the floor lacks turned off one by one (bench/core.ts). */
  breakdown: Samples;
  body: BodyScaleResult;
  handlerCounts: number[];
  handlers: Samples;
  http: Map<ServerKind, HttpSamples>;
  memory: MemoryResult[];
  stores: StoreResults;
  handoff: HandoffResults;
  reconcile?: ReconcileResults;
  inbox?: InboxResults;
  confirm?: ConfirmResults;
}

export interface Target {
  name: string;
  short: string;
  /** A ratio (for the chart's log axis); see `text` for targets stated in other units. */
  value: number;
  op: '≤' | '≥';
  bound: number;
  met: boolean;
  /** For req/s targets: the same ratio from server CPU time per request. */
  cpu?: number;
  /** How to print the measured value and the bound, when they are not plain ratios. */
  text?: { value: string; bound: string };
}

const x = (value: number) => `${value.toFixed(2)}×`;
const MIB = 1024 * 1024;

function target(name: string, short: string, value: number, op: '≤' | '≥', bound: number): Target {
  return { name, short, value, op, bound, met: op === '≤' ? value <= bound : value >= bound };
}

/** The targets of issue 16, then the scale targets kept from before. */
export function targets(r: Results): Target[] {
  const core1k = r.core[0]!.samples;
  const large = r.core.filter((c) => c.bytes >= 64 * 1024);
  const list = [
    target(
      'Core `receive()` at 1 KB vs the hand-written floor (time)',
      'receive() / floor, 1 KB',
      ratio(core1k, CASES.jobhook, CASES.floor),
      '≤',
      1.3,
    ),
    target(
      'Core `receive()` given the 1 KB body as a string vs the floor on the same string (time)',
      'receive() / floor, 1 KB string',
      ratio(core1k, CASES.jobhookString, CASES.floorString),
      '≤',
      1.3,
    ),
    target(
      '`standardwebhooks` verify vs core `receive()`, both given the 1 KB body as a string (time)',
      'standardwebhooks / receive(), 1 KB string',
      ratio(core1k, CASES.standardwebhooksString, CASES.jobhookString),
      '≥',
      1,
    ),
    target(
      '`standardwebhooks` verify vs core `receive()` at 1 KB (time)',
      'standardwebhooks / receive(), 1 KB',
      ratio(core1k, CASES.standardwebhooks, CASES.jobhook),
      '≥',
      2,
    ),
  ];
  if (large.length > 0) {
    list.push(
      target(
        `\`standardwebhooks\` verify vs core \`receive()\` from 64 KB (time, the least of ${large.map((c) => sizeLabel(c.bytes)).join(', ')})`,
        'standardwebhooks / receive(), ≥ 64 KB',
        Math.min(...large.map((c) => ratio(c.samples, CASES.standardwebhooks, CASES.jobhook))),
        '≥',
        3,
      ),
    );
  }
  // Fastify and Koa have no bound in the issues: they get the other framework adapters' 0.9×.
  const pairs: [ServerKind, ServerKind, string, number][] = [
    ['node-jobhook', 'node-hand', 'Node', 0.8],
    ['express-jobhook', 'express-hand', 'Express', 0.9],
    ['hono-jobhook', 'hono-hand', 'Hono', 0.9],
    ['fastify-jobhook', 'fastify-hand', 'Fastify', 0.9],
    ['koa-jobhook', 'koa-hand', 'Koa', 0.9],
  ];
  for (const [adapter, hand, label, bound] of pairs) {
    if (!r.http.has(adapter) || !r.http.has(hand)) continue;
    list.push({
      ...target(
        `${label} adapter vs hand-written ${label} handler (req/s)`,
        `${label} adapter / by hand`,
        rpsRatio(r.http, adapter, hand),
        '≥',
        bound,
      ),
      cpu: cpuRatio(r.http, adapter, hand),
    });
  }
  if (r.http.has('node-jobhook') && r.http.has('node-octokit')) {
    const cpu = cpuRatio(r.http, 'node-jobhook', 'node-octokit');
    const t = target(
      'Node adapter vs @octokit/webhooks createNodeMiddleware (req/s, and less CPU per request)',
      'Node adapter / octokit',
      rpsRatio(r.http, 'node-jobhook', 'node-octokit'),
      '≥',
      1,
    );
    list.push({ ...t, met: t.met && cpu >= 1, cpu });
  }
  if (r.apart && r.http.has(BEFORE_KIND)) {
    // From the builds measured apart: in one process the two moved by more than a change does.
    list.push(
      target(
        'Core `receive()` at 1 KB within 5 % of the build before (CPU time, each build in its own process, after / before)',
        'receive(), after / before, 1 KB',
        median(r.apart.bytes.ratios),
        '≤',
        1.05,
      ),
      target(
        'Core `receive()` given the 1 KB body as a string within 5 % of the build before (CPU time, each build in its own process, after / before)',
        'receive(), after / before, 1 KB string',
        median(r.apart.string.ratios),
        '≤',
        1.05,
      ),
      {
        ...target(
          'Node adapter within 5 % of the build before (req/s, after / before)',
          'Node adapter, after / before',
          rpsRatio(r.http, 'node-jobhook', BEFORE_KIND),
          '≥',
          0.95,
        ),
        cpu: cpuRatio(r.http, 'node-jobhook', BEFORE_KIND),
      },
    );
  }
  const counted = r.instructions?.perDelivery;
  if (counted?.floor && counted.jobhook && counted.floorString && counted.jobhookString) {
    list.push(
      target(
        'Core `receive()` at 1 KB vs the hand-written floor (instructions, callgrind)',
        'receive() / floor, 1 KB, instructions',
        counted.jobhook / counted.floor,
        '≤',
        1.6,
      ),
      target(
        'Core `receive()` given the 1 KB body as a string vs the floor on the same string (instructions, callgrind)',
        'receive() / floor, 1 KB string, instructions',
        counted.jobhookString / counted.floorString,
        '≤',
        1.6,
      ),
    );
  }
  const jobhookMemory = r.memory.find((m) => m.kind === 'node-jobhook');
  const handMemory = r.memory.find((m) => m.kind === 'node-hand');
  if (jobhookMemory && handMemory) {
    const extra = (jobhookMemory.peakRss - handMemory.peakRss) / MIB;
    const allowed = 25;
    list.push({
      ...target(
        `Peak RSS of the Node adapter under sustained ${sizeLabel(jobhookMemory.bodyBytes)} load vs hand-written`,
        'peak RSS, Node adapter / by hand',
        jobhookMemory.peakRss / handMemory.peakRss,
        '≤',
        (handMemory.peakRss + allowed * MIB) / handMemory.peakRss,
      ),
      text: { value: `${extra >= 0 ? '+' : ''}${extra.toFixed(0)} MiB`, bound: `+${allowed} MiB` },
    });
  }
  list.push(
    target(
      'Per-byte cost of `receive()` vs the floor (hash + parse), 1 KB → 1 MB',
      'receive() / floor, per byte',
      slope(r.body, 'jobhook') / slope(r.body, 'floor'),
      '≤',
      1.25,
    ),
  );
  const last = r.handlerCounts[r.handlerCounts.length - 1]!;
  const first = r.handlerCounts[0]!;
  list.push(
    target(
      `\`receive()\` with ${last} vs ${first} handler(s) registered for other event types (time)`,
      `${last} vs ${first} other handlers`,
      ratio(r.handlers, `other ${last}`, `other ${first}`),
      '≤',
      1.15,
    ),
  );
  if (r.inbox) list.push(...inboxTargets(r.inbox));
  return list;
}

export function table(head: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
const rate = (nsPerByte: number) => `${(1e9 / nsPerByte / 1024 / 1024).toFixed(0)} MiB/s`;

export function markdown(r: Results, list: Target[]): string {
  const cpu = cpus();
  const out: string[] = [];
  out.push('# jobhook benchmarks', '');
  out.push(
    `Generated by \`npm run bench\`${r.quick ? ' (BENCH_QUICK=1: short runs, noisy)' : ''} on ${r.startedAt.toISOString()}, in ${r.seconds.toFixed(0)} s.`,
    '',
    `- Machine: ${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${cpu.length} cores, ${mb(totalmem())} RAM (${mb(freemem())} free at the end), ${platform()} ${release()}`,
    `- Node ${process.version}, V8 ${process.versions.v8}`,
    `- Settings: ${r.settings}`,
    '- The machine is shared: absolute times drift, so every comparison below is a ratio of measurements taken side by side in interleaved rounds of this run (median over rounds).',
    '',
  );
  out.push('## Targets', '');
  out.push(
    table(
      ['Target', 'Measured', 'Needed', '', 'From server CPU per request'],
      list.map((t) => [
        t.name,
        t.text?.value ?? x(t.value),
        `${t.op} ${t.text?.bound ?? x(t.bound)}`,
        t.met ? 'met' : '**missed**',
        t.cpu === undefined ? '' : x(t.cpu),
      ]),
    ),
    '',
  );

  const core1k = r.core[0]!.samples;
  out.push(
    `For scale: at 1 KB the hand-written floor itself is ${x(ratio(core1k, CASES.standardwebhooks, CASES.floor))} faster than \`standardwebhooks\` verify; at ${r.core
      .slice(1)
      .map(
        (c) =>
          `${sizeLabel(c.bytes)} \`receive()\` is ${x(ratio(c.samples, CASES.standardwebhooks, CASES.jobhook))}`,
      )
      .join(' and at ')} faster than it.`,
    '',
  );
  out.push(...beforeAndAfter(r));
  out.push('## Core: time per delivery', '');
  out.push(
    'One `job.completed` delivery, each library on the same body signed in its own scheme. jobhook `receive()` verifies, parses, validates (zod), claims the event id in the default in-memory dedupe store (a fresh event per delivery, so the store does its real work, full at 10,000 ids and evicting) and dispatches to one no-op handler. Median time per delivery; in brackets, the time relative to jobhook `receive()`.',
    '',
  );
  const names = Object.values(CASES);
  out.push(
    table(
      ['', ...r.core.map((c) => sizeLabel(c.bytes))],
      names.map((name) => [
        name,
        ...r.core.map(
          (c) => `${formatNs(median(c.samples[name]!))} (${x(ratio(c.samples, name, CASES.jobhook))})`,
        ),
      ]),
    ),
    '',
  );

  out.push(...instructionsSection(r.instructions));
  out.push('## Core: where the time of `receive()` goes, 1 KB', '');
  out.push(
    'The same fresh 1 KB deliveries, the receiver created with the features the hand-written floor does not have turned off one by one, each case against the floor in the same interleaved rounds. The last row is what remains: Standard Webhooks header checks, HMAC, UTF-8 validation, JSON.parse and dispatch to the handler.',
    '',
  );
  const floorNs = median(r.breakdown[CASES.floor]!);
  out.push(
    table(
      ['`receive()`', 'time per delivery', 'vs the floor', 'over the floor'],
      Object.values(BREAKDOWN).map((name) => [
        name,
        formatNs(median(r.breakdown[name]!)),
        x(ratio(r.breakdown, name, CASES.floor)),
        `+${formatNs(median(r.breakdown[name]!) - floorNs)}`,
      ]),
    ),
    '',
  );

  out.push('## HTTP on loopback', '');
  out.push(
    'autocannon in the parent process, each server in its own child process; 1 KB `job.completed`, every request a fresh event (its own payload id, which jobhook dedupes by, and delivery id, signed as it is sent), so jobhook never answers from the duplicate path: each server counts its handler runs and the run fails if one is missing. Hand-written handlers verify the same signature the same way (node:crypto, timingSafeEqual, JSON.parse) and answer 200; they do not validate or deduplicate. Octokit gets its own scheme (`x-hub-signature-256`) on the same body. Median over rounds; server CPU / request is the CPU time (user + system) of the server process over the requests it answered in the round, a measure that the other work on a shared machine disturbs far less than req/s (it shows what each server would serve with a core to itself); peak RSS of the server process over the whole run.',
    '',
  );
  const labels: Record<ServerKind, string> = {
    'express-jobhook': 'Express + `expressHandler`',
    'express-hand': 'Express + `express.raw()`, by hand',
    'hono-jobhook': 'Hono + `honoHandler`',
    'hono-hand': 'Hono, by hand',
    'fastify-jobhook': 'Fastify + `fastifyPlugin`',
    'fastify-hand': 'Fastify, buffer parser, by hand',
    'koa-jobhook': 'Koa + `koaHandler`',
    'koa-hand': 'Koa + raw-body, by hand',
    'node-jobhook': 'node:http + `nodeHandler`',
    'node-hand': 'node:http, by hand',
    'node-octokit': 'node:http + octokit `createNodeMiddleware`',
    'node-jobhook-before': 'node:http + `nodeHandler`, the build before',
  };
  out.push(
    table(
      ['Server', 'req/s', 'p50', 'p99', 'server CPU / request', 'non-2xx', 'peak RSS'],
      [...r.http].map(([kind, s]) => [
        labels[kind],
        median(s.rps).toFixed(0),
        `${median(s.p50).toFixed(1)} ms`,
        `${median(s.p99).toFixed(1)} ms`,
        `${median(s.cpuUs).toFixed(0)} µs`,
        String(s.non2xx + s.errors),
        mb(s.maxRss),
      ]),
    ),
    '',
  );

  out.push('## Scale: body size', '');
  out.push(
    table(
      ['Body', 'hand-written floor', 'jobhook `receive()`', 'HMAC-SHA256 alone', 'receive() / floor'],
      r.body.sizes.map((s) => [
        sizeLabel(s.bytes),
        formatNs(median(s.samples.floor!)),
        formatNs(median(s.samples.jobhook!)),
        formatNs(median(s.samples.hmac!)),
        x(ratio(s.samples, 'jobhook', 'floor')),
      ]),
    ),
    '',
    `Marginal rate from the smallest to the largest body: jobhook \`receive()\` ${rate(slope(r.body, 'jobhook'))}, floor (hash + UTF-8 decode + JSON.parse) ${rate(slope(r.body, 'floor'))}, HMAC-SHA256 alone ${rate(slope(r.body, 'hmac'))}. Above a few KB the cost of every correct receiver is dominated by JSON.parse, not by the hash.`,
    '',
  );

  out.push('## Scale: registered handlers', '');
  const base = r.handlerCounts[0]!;
  out.push(
    table(
      [
        'Handlers',
        'for other event types: receive() at 1 KB',
        `vs ${base}`,
        'for `job.completed` itself (all run)',
        `vs ${base}`,
      ],
      r.handlerCounts.map((count) => [
        String(count),
        formatNs(median(r.handlers[`other ${count}`]!)),
        x(ratio(r.handlers, `other ${count}`, `other ${base}`)),
        formatNs(median(r.handlers[`same ${count}`]!)),
        x(ratio(r.handlers, `same ${count}`, `same ${base}`)),
      ]),
    ),
    '',
    'Other types: each has its own schema and handler, and the delivery is a `job.completed` with one no-op handler (the target: no growth). Same type: every no-op handler runs, so the cost grows with their number, as it must.',
    '',
  );

  out.push('## Memory under sustained load', '');
  out.push(
    table(
      ['Server', 'Body', 'Duration', 'Requests', 'RSS after start', 'Peak RSS', 'non-2xx'],
      r.memory.map((m) => [
        labels[m.kind],
        sizeLabel(m.bodyBytes),
        `${m.durationS} s`,
        String(m.requests),
        mb(m.rssAtStart),
        mb(m.peakRss),
        String(m.non2xx),
      ]),
    ),
    '',
    'Fresh events throughout, so the dedupe store fills to its bound (10,000 ids) during the run.',
    '',
  );

  out.push(...storesSection(r.stores));
  out.push(...handoffSection(r.handoff));
  if (r.reconcile) out.push(...reconcileSection(r.reconcile));
  if (r.inbox) out.push(...inboxSection(r.inbox));
  if (r.confirm) out.push(...confirmSection(r.confirm));
  // The profiles' explanations, written by hand next to this file.
  const notes = resolve('bench/NOTES.md');
  if (existsSync(notes)) out.push(readFileSync(notes, 'utf8'));
  return out.join('\n');
}

const INSTRUCTION_ROWS: [string, InstructionCase, InstructionCase | undefined][] = [
  ['hand-written floor', 'floor', undefined],
  ['jobhook `receive()`', 'jobhook', 'floor'],
  ['hand-written floor, string body', 'floorString', undefined],
  ['jobhook `receive()`, string body', 'jobhookString', 'floorString'],
  ['`standardwebhooks` verify, string body', 'standardwebhooksString', 'floorString'],
  ["the build before's `receive()` (BENCH_BASELINE)", 'jobhookBefore', 'floor'],
  ["the build before's `receive()`, string body", 'jobhookStringBefore', 'floorString'],
];

/** Instructions per delivery (bench/instructions.ts), or the line saying why they were not counted. */
function instructionsSection(counted: InstructionResults | undefined): string[] {
  if (!counted) return [];
  const out = ['## Core: instructions per delivery, 1 KB', ''];
  if (counted.skipped) return [...out, `Not counted: ${counted.skipped}.`, ''];
  const { warmup, deliveries } = counted.options;
  out.push(
    `Counted by valgrind's callgrind, which the machine's load moves far less than it moves timings. Each case runs in two processes, both warmed up by ${warmup} fresh deliveries with callgrind's instrumentation off and then counting ${deliveries} and ${2 * deliveries} more (all ${2 * deliveries} made in both); the difference over ${deliveries} is one delivery's instructions in the steady state. Each process: \`${counted.command}\`. bench/NOTES.md ("Instructions per delivery") says what these windows include.`,
    '',
  );
  const per = counted.perDelivery;
  const thousands = (n: number | undefined) => (n === undefined ? '' : `${(n / 1000).toFixed(1)}k`);
  out.push(
    table(
      ['', 'instructions per delivery', 'vs the floor on the same body form'],
      INSTRUCTION_ROWS.filter(([, name]) => per[name] !== undefined).map(([label, name, floor]) => [
        label,
        thousands(per[name]),
        floor && per[name] && per[floor] ? x(per[name] / per[floor]) : '',
      ]),
    ),
    '',
  );
  return out;
}

/** The build before (BENCH_BASELINE) against this one, from the rounds they shared; empty without it. */
function beforeAndAfter(r: Results): string[] {
  const core1k = r.core[0]!.samples;
  const before = r.http.get(BEFORE_KIND);
  const after = r.http.get('node-jobhook');
  if (!r.baseline || !core1k[BEFORE.jobhook] || !before || !after) return [];
  const { apart } = r;
  const vsFloor = (name: string, floor: string) =>
    `${x(ratio(core1k, name, floor))} (${formatNs(median(core1k[name]!))})`;
  return [
    '## Before and after',
    '',
    `The build before is the one in \`${r.baseline}\` (BENCH_BASELINE), measured beside this one: its \`receive()\` in the same interleaved rounds as the 1 KB core cases, its Node adapter (\`nodeHandler\`, the same receiver options) as one more server in the HTTP rounds. \`receive()\` is given as its time over the hand-written floor's (time per delivery in brackets); after / before is the median over rounds of the ratio within each round (above 1×: more time, more requests per second, more CPU). Sharing one process, the two builds share a heap and the inline caches of zod and node:crypto, and their 1 KB ratio moves from run to run by more than a change does; so \`receive()\` is measured again with each build alone in its own process (bench/one-build.ts: CPU time per fresh 1 KB delivery, the median of 15 batches of 4,000 after 20,000), ${apart ? apart.bytes.ratios.length : 0} pairs of processes per body form, which build goes first alternating; after / before is the median of the pairs' ratios, and it is what the targets take.`,
    '',
    table(
      ['', 'build before', 'this build', 'after / before'],
      [
        [
          '`receive()` / floor, 1 KB',
          vsFloor(BEFORE.jobhook, CASES.floor),
          vsFloor(CASES.jobhook, CASES.floor),
          x(ratio(core1k, CASES.jobhook, BEFORE.jobhook)),
        ],
        [
          '`receive()` / floor, 1 KB string body',
          vsFloor(BEFORE.jobhookString, CASES.floorString),
          vsFloor(CASES.jobhookString, CASES.floorString),
          x(ratio(core1k, CASES.jobhookString, BEFORE.jobhookString)),
        ],
        ...(apart
          ? (['bytes', 'string'] as const).map((form) => [
              `\`receive()\` CPU per delivery, 1 KB${form === 'string' ? ' string body' : ''}, each build in its own process`,
              formatNs(median(apart[form].before) * 1000),
              formatNs(median(apart[form].after) * 1000),
              x(median(apart[form].ratios)),
            ])
          : []),
        [
          'Node adapter, req/s',
          median(before.rps).toFixed(0),
          median(after.rps).toFixed(0),
          x(rpsRatio(r.http, 'node-jobhook', BEFORE_KIND)),
        ],
        [
          'Node adapter, server CPU / request',
          `${median(before.cpuUs).toFixed(0)} µs`,
          `${median(after.cpuUs).toFixed(0)} µs`,
          x(cpuRatio(r.http, BEFORE_KIND, 'node-jobhook')),
        ],
      ],
    ),
    '',
  ];
}

const STORE_LABELS = {
  memory: 'in memory (default)',
  redis: '`redisDedupeStore` (ioredis)',
  postgres: '`postgresDedupeStore` (pg Pool)',
} as const;

function storesSection(stores: StoreResults): string[] {
  const out = ['## Shared dedupe stores', ''];
  const { rounds, deliveries, concurrency } = stores.options;
  out.push(
    `\`receiver.receive()\` (no HTTP) on fresh 1 KB \`job.completed\` deliveries with each store, ${rounds} interleaved rounds of ${deliveries} deliveries one at a time and ${deliveries} with ${concurrency} in flight; Redis and PostgreSQL on this machine (loopback). Median over rounds; "over memory" is the difference to the in-memory store within each round. Round trips are the store's calls to its service per delivery, counted at the client (Redis: one script per claim and per complete, and the PUBLISH that shares the job result with other instances; Postgres: one statement each). CPU is this process's (the receiver's) time per delivery with ${concurrency} in flight, not the service's.`,
    '',
  );
  const rows = STORE_NAMES.filter((name) => stores.samples[name]).map((name) => {
    const s = stores.samples[name]!;
    const seq = median(s.sequential);
    const conc = median(s.concurrent);
    const base = name === 'memory';
    return [
      STORE_LABELS[name],
      `${seq.toFixed(1)} µs`,
      base ? '' : `+${overMemory(stores, name, 'sequential').toFixed(0)} µs`,
      `${(1e6 / conc).toFixed(0)}`,
      `${conc.toFixed(1)} µs`,
      base ? '' : `+${overMemory(stores, name, 'concurrent').toFixed(0)} µs`,
      `${median(s.cpu).toFixed(1)} µs`,
      s.roundTrips.toFixed(2),
    ];
  });
  out.push(
    table(
      [
        'Store',
        'one at a time: µs / delivery',
        'over memory',
        `${concurrency} in flight: deliveries/s`,
        'µs / delivery',
        'over memory',
        'CPU / delivery',
        'round trips / delivery',
      ],
      rows,
    ),
    '',
  );
  for (const line of stores.skipped) out.push(`- ${line}`);
  if (stores.skipped.length > 0) out.push('');
  return out;
}

export function handoffSection(handoff: HandoffResults): string[] {
  const out = ['## Hand-offs: BullMQ, pg-boss, JetStream', ''];
  const { rounds, deliveries, concurrency } = handoff.options;
  out.push(
    `End to end over HTTP on loopback: fresh 1 KB \`job.completed\` deliveries, signed in this process before each round, sent over keep-alive connections with ${concurrency} in flight (half to each receiver process), to one of two deployments of 2 receiver processes (node:http + \`nodeHandler\`); ${rounds} round(s) of ${deliveries} deliveries per deployment in alternating order, after a warm-up. Baseline: each receiver runs the handler itself and deduplicates with \`redisDedupeStore\`, the shared store two instances would otherwise need. Hand-offs: each receiver verifies, validates and queues the event with \`bullmqHandoff\` (it answers once the job is stored in Redis), \`pgBossHandoff\` (once the job row is committed in PostgreSQL) or \`natsHandoff\` (once the JetStream stream acked it), and 2 worker processes (\`runWorker\`, and the pg-boss and JetStream hand-offs' \`work()\`, ${WORKER_CONCURRENCY} jobs at a time each) run the handler. The handler only counts its runs; the run fails unless every delivery ran it exactly once. Answered: deliveries per second from the first request until the last answer; handled: until the last handler ran (the baseline answers after its handler, so the two are the same). CPU / delivery: user + system time over the round of the 2 receiver processes and of the 2 worker processes (\`process.cpuUsage\` in each, asked over IPC), and of the Redis server (INFO cpu: the whole server, so another client of it would count too), divided by the deliveries. Median over rounds; the last rows are the medians of the ratios hand-off / baseline within each round (above 1× is more deliveries per second, or more CPU per delivery). The receivers, the workers, the sending process, Redis, PostgreSQL and nats-server all share this machine's cores, so deliveries per second are what one machine reaches with all of them on it; CPU per delivery is what carries over to separate machines.`,
    '',
  );
  const labels: Record<Setup, string> = {
    inline: 'Handler in the receivers, `redisDedupeStore` (baseline)',
    handoff: 'Receivers `bullmqHandoff` → BullMQ → 2 `runWorker` processes',
    pgboss: 'Receivers `pgBossHandoff` → pg-boss → 2 worker processes (`handoff.work()`)',
    nats: 'Receivers `natsHandoff` → JetStream → 2 worker processes (`handoff.work()`)',
  };
  const names: Record<Exclude<Setup, 'inline'>, string> = {
    handoff: 'BullMQ',
    pgboss: 'pg-boss',
    nats: 'JetStream',
  };
  const { inline } = handoff.samples;
  const engines = (['handoff', 'pgboss', 'nats'] as const).filter((setup) => handoff.samples[setup]);
  if (inline && engines.length > 0) {
    const us = (values: number[]) => `${median(values).toFixed(0)} µs`;
    const row = (label: Setup, s: HandoffSamples) => [
      labels[label],
      median(s.answered).toFixed(0),
      median(s.handled).toFixed(0),
      us(s.receiverCpu),
      label === 'inline' ? '—' : us(s.workerCpu),
      us(s.receiverCpu.map((value, i) => value + s.workerCpu[i]!)),
      // The Redis server's CPU is the engine's own for the baseline and BullMQ only.
      label === 'inline' || label === 'handoff' ? us(s.redisCpu) : '—',
    ];
    const ratios = (setup: Exclude<Setup, 'inline'>) => [
      `${names[setup]} / baseline`,
      x(handoffRatio(handoff, 'answered', setup)),
      x(handoffRatio(handoff, 'handled', setup)),
      x(handoffRatio(handoff, 'receiverCpu', setup)),
      '',
      x(handoffRatio(handoff, 'totalCpu', setup)),
      setup === 'handoff' ? x(handoffRatio(handoff, 'redisCpu', setup)) : '',
    ];
    out.push(
      table(
        [
          'Deployment',
          'answered: deliveries/s',
          'handled: deliveries/s',
          'CPU / delivery: receivers',
          'workers',
          'receivers + workers',
          'Redis server',
        ],
        [
          row('inline', inline),
          ...engines.map((setup) => row(setup, handoff.samples[setup]!)),
          ...engines.map(ratios),
        ],
      ),
      '',
    );
  }
  for (const line of handoff.skipped) out.push(`- ${line}`);
  if (handoff.skipped.length > 0) out.push('');
  return out;
}

/** A horizontal bar per target on a log axis, with the bound marked; green when met. */
export function svg(list: Target[]): string {
  const width = 760;
  const left = 250;
  const right = 120;
  const rowH = 34;
  const top = 56;
  const height = top + list.length * rowH + 40;
  const min = 0.25;
  const max = 8;
  const scale = (v: number) =>
    left +
    ((Math.log2(Math.min(Math.max(v, min), max)) - Math.log2(min)) / (Math.log2(max) - Math.log2(min))) *
      (width - left - right);
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="12" y="22" font-size="15" font-weight="600">jobhook: measured ratios against their targets (one run, log scale)</text>`,
    `<text x="12" y="40" fill="#555">bar = measured, black tick = target bound; green met, red missed</text>`,
  );
  for (const tick of [0.25, 0.5, 1, 2, 4, 8]) {
    const tx = scale(tick);
    parts.push(
      `<line x1="${tx}" y1="${top - 6}" x2="${tx}" y2="${top + list.length * rowH}" stroke="#e3e3e3"/>`,
      `<text x="${tx}" y="${top + list.length * rowH + 16}" text-anchor="middle" fill="#555">${tick}×</text>`,
    );
  }
  list.forEach((t, i) => {
    const y = top + i * rowH;
    const color = t.met ? '#2e9e5b' : '#d64545';
    const from = scale(min);
    const to = scale(t.value);
    parts.push(
      `<text x="${left - 8}" y="${y + 17}" text-anchor="end">${esc(t.short)}</text>`,
      `<rect x="${from}" y="${y + 6}" width="${Math.max(1, to - from)}" height="16" fill="${color}" rx="2"/>`,
      `<line x1="${scale(t.bound)}" y1="${y + 2}" x2="${scale(t.bound)}" y2="${y + 26}" stroke="#111" stroke-width="2"/>`,
      `<text x="${Math.max(to, scale(t.bound)) + 6}" y="${y + 17}">${esc(t.text?.value ?? x(t.value))} (${esc(t.op)} ${esc(t.text?.bound ?? String(t.bound))})</text>`,
    );
  });
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}
