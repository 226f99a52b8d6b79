/**
 * HTTP on loopback: each server runs in its own child process, autocannon drives it from this
 * one. Rounds interleave the servers so that an adapter and its hand-written twin share the load
 * the machine had at that moment. Every request carries a fresh delivery id (see `Pool`).
 */
import { fork, type ChildProcess } from 'node:child_process';
import autocannon, { type Result } from 'autocannon';
import { githubHeaders, jobCompletedBody, standardHeaders } from './fixtures.js';
import { median } from './measure.js';
import { PATH, type ServerKind, type ServerMessage } from './server.js';

export interface HttpOptions {
  durationS: number;
  warmupS: number;
  rounds: number;
  connections: number;
}

export interface HttpSamples {
  rps: number[];
  /** Server CPU time (user + system) per request, in microseconds: robust to a busy machine. */
  cpuUs: number[];
  p50: number[];
  p99: number[];
  non2xx: number;
  errors: number;
  maxRss: number;
}

interface Server {
  port: number;
  rss: number;
  /** CPU time the server process used so far, in microseconds. */
  cpu(): Promise<number>;
  stop(): Promise<ServerMessage>;
}

function spawnServer(kind: ServerKind): Promise<Server> {
  const child: ChildProcess = fork(new URL('./server.js', import.meta.url).pathname, [kind], {
    execArgv: process.execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the ${kind} server exited (${code}) before listening`)));
    child.once('message', (message: ServerMessage) => {
      child.removeAllListeners('exit');
      resolve({
        port: message.port!,
        rss: message.rss,
        cpu: () =>
          new Promise((done) => {
            child.once('message', (reply: { cpuUs: number }) => done(reply.cpuUs));
            child.send('cpu');
          }),
        stop: () =>
          new Promise((done) => {
            child.once('message', (last: ServerMessage) => done(last));
            child.send('stop');
          }),
      });
    });
  });
}

/**
 * Pre-signed headers, one fresh delivery id each. A server's cursor walks its own copy, and the
 * pool is larger than the default dedupe store (10,000 ids), so no server sees an id it still
 * remembers: every jobhook delivery takes the dedupe store's full claim/complete/evict path.
 */
class Pool {
  private readonly cursors = new Map<ServerKind, number>();
  private constructor(
    private readonly standard: Record<string, string>[],
    private readonly github: Record<string, string>[],
  ) {}

  static create(body: Buffer, size: number, withGithub: boolean): Pool {
    const standard = Array.from({ length: size }, () => standardHeaders(body));
    const signature = githubHeaders(body)['x-hub-signature-256'];
    const github = withGithub
      ? Array.from({ length: size }, (_, i) => ({
          ...githubHeaders(Buffer.alloc(0), `gh_${i}`),
          'x-hub-signature-256': signature,
        }))
      : [];
    return new Pool(standard, github);
  }

  next(kind: ServerKind): Record<string, string> {
    const list = kind === 'node-octokit' ? this.github : this.standard;
    const at = this.cursors.get(kind) ?? 0;
    this.cursors.set(kind, at + 1);
    return list[at % list.length]!;
  }
}

function load(
  server: Server,
  kind: ServerKind,
  body: Buffer,
  pool: Pool,
  durationS: number,
  connections: number,
) {
  return autocannon({
    url: `http://127.0.0.1:${server.port}`,
    connections,
    duration: durationS,
    requests: [
      {
        method: 'POST',
        path: PATH,
        body,
        setupRequest: (request) => ({ ...request, headers: pool.next(kind) }),
      },
    ],
  });
}

function empty(): HttpSamples {
  return { rps: [], cpuUs: [], p50: [], p99: [], non2xx: 0, errors: 0, maxRss: 0 };
}

function record(samples: HttpSamples, result: Result, cpuUs: number) {
  samples.rps.push(result.requests.total / result.duration);
  samples.cpuUs.push(cpuUs / result.requests.total);
  samples.p50.push(result.latency.p50);
  samples.p99.push(result.latency.p99);
  samples.non2xx += result.non2xx;
  samples.errors += result.errors + result.timeouts;
}

/** Runs every server kind, interleaved round by round. */
export async function runHttp(kinds: readonly ServerKind[], options: HttpOptions) {
  const body = jobCompletedBody(1024);
  const pool = Pool.create(body, 20_000, kinds.includes('node-octokit'));
  const servers = new Map<ServerKind, Server>();
  const results = new Map<ServerKind, HttpSamples>();
  try {
    for (const kind of kinds) {
      const server = await spawnServer(kind);
      servers.set(kind, server);
      results.set(kind, empty());
      await load(server, kind, body, pool, options.warmupS, options.connections);
    }
    for (let round = 0; round < options.rounds; round++) {
      for (let k = 0; k < kinds.length; k++) {
        const kind = kinds[(round + k) % kinds.length]!;
        const server = servers.get(kind)!;
        const cpuBefore = await server.cpu();
        const result = await load(server, kind, body, pool, options.durationS, options.connections);
        record(results.get(kind)!, result, (await server.cpu()) - cpuBefore);
      }
    }
  } finally {
    for (const [kind, server] of servers) {
      const last = await server.stop();
      const samples = results.get(kind);
      if (samples) samples.maxRss = last.maxRss;
    }
  }
  return results;
}

/** Median over rounds of `a`'s req/s over `b`'s, each ratio within one round. */
export function rpsRatio(results: Map<ServerKind, HttpSamples>, a: ServerKind, b: ServerKind): number {
  const x = results.get(a)!.rps;
  const y = results.get(b)!.rps;
  return median(x.map((value, i) => value / y[i]!));
}

/**
 * `b`'s server CPU per request over `a`'s (median over rounds): the req/s ratio the two would
 * reach if each had a core to itself, whatever else the machine was doing.
 */
export function cpuRatio(results: Map<ServerKind, HttpSamples>, a: ServerKind, b: ServerKind): number {
  const x = results.get(a)!.cpuUs;
  const y = results.get(b)!.cpuUs;
  return median(x.map((value, i) => y[i]! / value));
}

export interface MemoryResult {
  kind: ServerKind;
  bodyBytes: number;
  durationS: number;
  requests: number;
  rssAtStart: number;
  peakRss: number;
  non2xx: number;
}

/** Sustained load with fresh ids, so the dedupe store fills to its bound: peak RSS of the server. */
export async function runMemory(
  kind: ServerKind,
  bodySize: number,
  options: HttpOptions,
): Promise<MemoryResult> {
  const body = jobCompletedBody(bodySize);
  const pool = Pool.create(body, 12_000, kind === 'node-octokit');
  const server = await spawnServer(kind);
  const result = await load(server, kind, body, pool, options.durationS, options.connections).catch(
    async (error: unknown) => {
      await server.stop();
      throw error;
    },
  );
  const last = await server.stop();
  return {
    kind,
    bodyBytes: body.length,
    durationS: options.durationS,
    requests: result.requests.total,
    rssAtStart: server.rss,
    peakRss: last.maxRss,
    non2xx: result.non2xx,
  };
}
