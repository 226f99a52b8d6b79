/**
 * HTTP on loopback: each server runs in its own child process, autocannon drives it from this
 * one. Rounds interleave the servers so that an adapter and its hand-written twin share the load
 * the machine had at that moment. Every request is a fresh event (see `Deliveries`).
 */
import { fork, type ChildProcess } from 'node:child_process';
import autocannon, { type Result } from 'autocannon';
import { githubHeaders, jobCompletedBody, standardHeaders, withFreshEventId } from './fixtures.js';
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
  /** CPU time the server process used so far (µs), and its handler runs so far. */
  cpu(): Promise<{ cpuUs: number; handled: number }>;
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
            child.once('message', (reply: { cpuUs: number; handled: number }) => done(reply));
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
 * Each request is a fresh event, signed as it is sent: its own payload id (jobhook's dedupe key)
 * and delivery id, so every jobhook delivery takes the dedupe store's full claim/complete/evict
 * path and never the duplicate one. Octokit gets its own scheme on the same body. The signing
 * happens in this process, the same work for every server.
 */
class Deliveries {
  constructor(private readonly body: Buffer) {}

  next(kind: ServerKind): { headers: Record<string, string>; body: Buffer } {
    const body = withFreshEventId(this.body);
    return { headers: kind === 'node-octokit' ? githubHeaders(body) : standardHeaders(body), body };
  }
}

function load(
  server: Server,
  kind: ServerKind,
  deliveries: Deliveries,
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
        setupRequest: (request) => ({ ...request, ...deliveries.next(kind) }),
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
  const deliveries = new Deliveries(jobCompletedBody(1024));
  const servers = new Map<ServerKind, Server>();
  const results = new Map<ServerKind, HttpSamples>();
  try {
    for (const kind of kinds) {
      const server = await spawnServer(kind);
      servers.set(kind, server);
      results.set(kind, empty());
      await load(server, kind, deliveries, options.warmupS, options.connections);
    }
    for (let round = 0; round < options.rounds; round++) {
      for (let k = 0; k < kinds.length; k++) {
        const kind = kinds[(round + k) % kinds.length]!;
        const server = servers.get(kind)!;
        const before = await server.cpu();
        const result = await load(server, kind, deliveries, options.durationS, options.connections);
        const after = await server.cpu();
        record(results.get(kind)!, result, after.cpuUs - before.cpuUs);
        // A jobhook server runs its handler once per accepted request; fewer means duplicates.
        const missed = result['2xx'] - (after.handled - before.handled);
        if (kind.includes('-jobhook') && missed > 0) {
          throw new Error(`${kind}: ${missed} of ${result['2xx']} requests did not run the handler`);
        }
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
  const server = await spawnServer(kind);
  const result = await load(server, kind, new Deliveries(body), options.durationS, options.connections).catch(
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
