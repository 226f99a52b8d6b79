import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { startGateway } from 'jobhook/testing';
import {
  API_KEY_RULE,
  failWhenPromptContains,
  INTERACTIVE_RETRY_DELAYS_MS,
  isPlausibleApiKey,
} from '../simulator/config.js';
import { PAYLOAD_SHAPES } from '../simulator/payload-shapes.js';
import { FOREIGN_SCHEMES } from '../simulator/foreign-signing.js';
import { isLoopback } from '../simulator/webhooks.js';
import { SIGNING_SCHEMES } from 'jobhook/extend';
import { UsageError, integer, listenFailure, out, parse } from './args.js';
import { gatewayHelp } from './help.js';
import { freshSecret } from './generate.js';

/** `jobhook gateway`: the simulator in the foreground until SIGINT or SIGTERM. */
export async function gateway(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    port: { type: 'string', short: 'p' },
    host: { type: 'string' },
    credits: { type: 'string' },
    'fail-when': { type: 'string' },
    'drop-rate': { type: 'string' },
    'no-retries': { type: 'boolean' },
    ca: { type: 'string' },
    'api-key': { type: 'string' },
    signing: { type: 'string' },
    payload: { type: 'string' },
    quiet: { type: 'boolean', short: 'q' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    process.stdout.write(gatewayHelp);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const failWhen = values['fail-when'] ?? 'fail';
  if (failWhen === '') throw new UsageError('--fail-when needs some text');
  const credits = integer(values.credits, '--credits');
  const port = integer(values.port, '--port');
  if (port !== undefined && port > 65535) throw new UsageError(`--port must be at most 65535: "${port}"`);
  if (values.host === '') throw new UsageError('--host needs an address');
  const apiKey = values['api-key'];
  // Never the value in the message: it may be a real key pasted by mistake.
  if (apiKey !== undefined && !isPlausibleApiKey(apiKey))
    throw new UsageError(`--api-key must be ${API_KEY_RULE}`);
  const host = values.host ?? '127.0.0.1';
  // A key derived from the folder is guessable by whoever knows the path: only on this machine.
  const stableKey = apiKey ?? (isLoopback(host) ? folderApiKey(process.cwd()) : undefined);
  const signing = choice(values.signing, '--signing', [...SIGNING_SCHEMES, ...FOREIGN_SCHEMES]);
  const payload = choice(values.payload, '--payload', PAYLOAD_SHAPES);
  const dropRate = share(values['drop-rate'], '--drop-rate');
  const ca = values.ca === undefined ? undefined : await readCa(values.ca);
  const deliveries = {
    ...(ca !== undefined && { ca }),
    ...(dropRate !== undefined && { dropRate }),
    retryDelaysMs: values['no-retries'] ? [] : INTERACTIVE_RETRY_DELAYS_MS,
  };

  const simulator = await startGateway({
    console: true,
    ...(stableKey !== undefined && { apiKey: stableKey }),
    ...(signing !== undefined && { signing }),
    ...(payload !== undefined && { payload }),
    ...(credits !== undefined && { credits }),
    ...(port !== undefined && { port }),
    ...(values.host !== undefined && { host: values.host }),
    jobs: { outcome: failWhenPromptContains(failWhen) },
    deliveries,
  }).catch((error: unknown) => {
    throw listenFailure(error, `${values.host ?? '127.0.0.1'}:${port ?? 0}`);
  });
  out('Gateway simulator running; Ctrl+C stops it.');
  // Lines to paste into a .env file, by the names the README and the other commands use.
  out(`GATEWAY_URL=${simulator.baseUrl}`);
  out(`GATEWAY_API_KEY=${simulator.apiKey}`);
  out(`WEBHOOK_SECRET=${freshSecret()}`);
  out('(WEBHOOK_SECRET is a fresh secret for your receiver: it signs what it registers with.)');
  out(keyNote(apiKey !== undefined, stableKey !== undefined, port !== undefined));
  out(`Console: ${simulator.consoleUrl} (open it in a browser)`);

  // What the simulator answered and delivered, as it happens (it keeps both as growing lists).
  let requests = 0;
  let attempts = 0;
  let dropped = 0;
  const report = () => {
    if (values.quiet) return;
    for (const { method, path, status } of simulator.requests.slice(requests)) {
      out(`  ${method} ${path} -> ${status}`);
    }
    for (const attempt of simulator.deliveries.slice(attempts)) {
      const outcome = attempt.status ?? attempt.error ?? (attempt.ok ? 'ok' : 'failed');
      out(
        `  delivery ${attempt.type} ${attempt.taskId} -> webhook ${attempt.webhookId}: ` +
          `${outcome} (attempt ${attempt.attempt})`,
      );
    }
    for (const drop of simulator.dropped.slice(dropped)) {
      out(`  delivery ${drop.type} ${drop.taskId} -> webhook ${drop.webhookId}: dropped (never sent)`);
    }
    requests = simulator.requests.length;
    attempts = simulator.deliveries.length;
    dropped = simulator.dropped.length;
  };
  const feed = setInterval(report, 100);

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  clearInterval(feed);
  report();
  await simulator.close();
  out(`Stopped (${signal}).`);
  return 0;
}

/**
 * The API key of `jobhook gateway` run in `folder` without `--api-key`: the same on every run
 * there, so the app's .env stays valid across restarts, and another in another folder.
 */
export function folderApiKey(folder: string): string {
  const digest = createHash('sha256').update(`jobhook gateway simulator key\0${folder}`).digest('hex');
  return `sk_sim_${digest.slice(0, 36)}`;
}

function keyNote(given: boolean, stable: boolean, portGiven: boolean): string {
  const url = portGiven ? '' : '; pass --port to keep GATEWAY_URL too';
  if (given) return `(GATEWAY_API_KEY is the one given with --api-key${url}.)`;
  if (stable) return `(GATEWAY_API_KEY is the same on every run in this folder${url}.)`;
  return '(GATEWAY_API_KEY is random: listening beyond this machine, pass --api-key to keep one.)';
}

/** One of `choices`, or undefined when not given. */
function choice<const C extends string>(value: string | undefined, what: string, choices: readonly C[]) {
  if (value === undefined) return undefined;
  if (!(choices as readonly string[]).includes(value)) {
    throw new UsageError(`${what} must be one of ${choices.join(', ')}: ${JSON.stringify(value)}`);
  }
  return value as C;
}

/** A share from 0 to 1, such as `0.5`. */
function share(value: string | undefined, what: string): number | undefined {
  if (value === undefined) return undefined;
  const number = /^(\d+\.?\d*|\.\d+)$/.test(value) ? Number(value) : NaN;
  if (!(number >= 0 && number <= 1))
    throw new UsageError(`${what} must be a number from 0 to 1: ${JSON.stringify(value)}`);
  return number;
}

async function readCa(file: string): Promise<string> {
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(
      `cannot read the --ca file ${JSON.stringify(file)}${error.code ? ` (${error.code})` : ''}`,
    );
  });
  if (!text.includes('-----BEGIN CERTIFICATE-----'))
    throw new UsageError(`--ca must be a PEM certificate file: ${JSON.stringify(file)}`);
  return text;
}
