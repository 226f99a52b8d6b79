import { writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline/promises';
import { redactor } from 'jobhook/extend';
import type { GatewayClient } from 'jobhook/client';
import { ProbeError, runProbe, type ProbeOptions } from '../probe/probe.js';
import { summaryLines, webhooksLeftClause, type ProbeReport } from '../probe/report.js';
import {
  CommandError,
  UsageError,
  env,
  httpUrl,
  integer,
  listenFailure,
  out,
  parse,
  printable,
  setting,
} from './args.js';
import { probeHelp } from './help.js';
import { jsonText } from './args.js';
import { clientFrom, connection } from './webhooks.js';

/**
 * `jobhook probe`: registers a temporary webhook, submits one job (it spends credits: asked
 * first, or `--yes`), and reports how the gateway signs, shapes and retries its deliveries, with
 * the receiver configuration that matches. The webhook is deleted at the end, on failure, on
 * Ctrl+C and when the terminal closes.
 */
export async function probe(args: string[]): Promise<number> {
  const { values, positionals } = parseProbeArgs(args);
  if (values.help) {
    process.stdout.write(probeHelp);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  // Checked in this order (the first bad option is the one named), all before anything is spent.
  const listen = listenSettingsOf(values);
  const job = jobSettingsOf(values);
  const gateway = gatewayOf(values);
  await askBeforeSpending(values, gateway.baseUrl);
  return await untilStopped(async (signal) => {
    try {
      const report = await runProbe(probeOptionsOf(values, listen, job, gateway, signal));
      await showReport(report, values, gateway);
      return exitCodeOf(report, gateway.redact);
    } catch (error) {
      throw probeFailure(error, listen, gateway.redact);
    }
  });
}

function parseProbeArgs(args: string[]) {
  return parse(args, {
    ...connection,
    'public-url': { type: 'string' },
    host: { type: 'string' },
    port: { type: 'string', short: 'p' },
    model: { type: 'string' },
    prompt: { type: 'string' },
    'aspect-ratio': { type: 'string' },
    'fail-prompt': { type: 'string' },
    'retries-for': { type: 'string' },
    timeout: { type: 'string' },
    yes: { type: 'boolean', short: 'y' },
    out: { type: 'string' },
  });
}

type ProbeValues = ReturnType<typeof parseProbeArgs>['values'];
type Redact = (text: string) => string;

interface ListenSettings {
  host: string;
  port: number;
  publicUrl: string | undefined;
}

function listenSettingsOf(values: ProbeValues): ListenSettings {
  const host = values.host ?? '127.0.0.1';
  if (host === '') throw new UsageError('--host needs an address');
  const port = integer(values.port, '--port') ?? 0;
  if (port > 65535) throw new UsageError(`--port must be at most 65535: "${port}"`);
  const publicUrl =
    values['public-url'] === undefined ? undefined : httpUrl(values['public-url'], '--public-url').href;
  if (publicUrl === undefined && (host === '0.0.0.0' || host === '::')) {
    throw new UsageError(
      `--public-url is needed when listening on ${host}: the URL the gateway reaches this machine at`,
    );
  }
  return { host, port, publicUrl };
}

interface JobSettings {
  aspectRatio: string;
  retriesForMs: number;
  timeoutMs: number | undefined;
}

/** The job to submit and how long to watch its deliveries, checked before anything is spent. */
function jobSettingsOf(values: ProbeValues): JobSettings {
  const aspectRatio = values['aspect-ratio'] ?? '1:1';
  if (!/^[1-9]\d*:[1-9]\d*$/.test(aspectRatio)) {
    throw new UsageError(
      `--aspect-ratio must be <width>:<height>, such as 16:9, not ${JSON.stringify(aspectRatio)}`,
    );
  }
  if (values.prompt?.trim() === '') throw new UsageError('--prompt needs some text');
  if (values['fail-prompt']?.trim() === '') throw new UsageError('--fail-prompt needs some text');
  const retriesForMs = seconds(values['retries-for'], '--retries-for') ?? 0;
  const timeoutMs = seconds(values.timeout, '--timeout');
  if (timeoutMs === 0) throw new UsageError('--timeout must be above 0');
  return { aspectRatio, retriesForMs, timeoutMs };
}

interface Gateway {
  client: GatewayClient;
  baseUrl: string;
  redact: Redact;
  print: (line: string) => void;
}

/** The gateway to probe, and how to write what it echoes without showing the API key. */
function gatewayOf(values: ProbeValues): Gateway {
  const client = clientFrom(values);
  const apiKey = values['api-key'] ?? setting('apiKey');
  const baseUrl = httpUrl((values['base-url'] ?? setting('baseUrl'))!, 'the base URL').href.replace(
    /\/$/,
    '',
  );
  // Nothing the gateway echoes may show the key, wherever it ends up.
  const redact = redactor(apiKey === undefined ? [] : [apiKey]);
  const print = (line: string) => out(redact(printable(line)));
  return { client, baseUrl, redact, print };
}

/** Submitting spends credits: without `--yes`, nothing is submitted unless the terminal says yes. */
async function askBeforeSpending(values: ProbeValues, baseUrl: string): Promise<void> {
  const jobs = values['fail-prompt'] === undefined ? 'one image job' : 'two image jobs (one meant to fail)';
  if (
    !values.yes &&
    !(await confirmed(`This submits ${jobs} to ${baseUrl}, which spends credits. Go on? [y/N] `))
  ) {
    throw new CommandError('nothing submitted');
  }
}

/** Ctrl+C, SIGTERM and a closed terminal abort `run`'s signal: its webhook is deleted however stopped. */
async function untilStopped<T>(run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const stop = new AbortController();
  const interrupted = (signal: NodeJS.Signals) => stop.abort(new Error(`interrupted (${signal})`));
  // Every way a run is stopped ends with the webhook deleted: a closed terminal (SIGHUP) too, and
  // what is printed to a terminal that went away fails quietly rather than ending the process.
  const stopSignals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  for (const name of stopSignals) process.once(name, interrupted);
  const goneTerminal = () => undefined;
  process.stdout.on('error', goneTerminal);
  try {
    return await run(stop.signal);
  } finally {
    for (const name of stopSignals) process.removeListener(name, interrupted);
    process.stdout.removeListener('error', goneTerminal);
  }
}

function probeOptionsOf(
  values: ProbeValues,
  listen: ListenSettings,
  job: JobSettings,
  gateway: Gateway,
  signal: AbortSignal,
): ProbeOptions {
  const { publicUrl } = listen;
  const { timeoutMs } = job;
  return {
    client: gateway.client,
    baseUrl: gateway.baseUrl,
    host: listen.host,
    port: listen.port,
    ...(publicUrl !== undefined && { publicUrl }),
    job: {
      model: values.model ?? env('JOBHOOK_MODEL') ?? 'default',
      ...(values.prompt !== undefined && { prompt: values.prompt }),
      aspectRatio: job.aspectRatio,
    },
    ...(values['fail-prompt'] !== undefined && { failPrompt: values['fail-prompt'] }),
    retriesForMs: job.retriesForMs,
    ...(timeoutMs !== undefined && { timeoutMs }),
    signal,
    ...(!values.json && { progress: gateway.print }),
  };
}

/** Writes the report to `--out`, when given, and shows it: as JSON with `--json`, else in words. */
async function showReport(report: ProbeReport, values: ProbeValues, gateway: Gateway): Promise<void> {
  const { redact, print } = gateway;
  const text = redact(jsonText(report));
  if (values.out !== undefined) {
    await writeFile(values.out, `${text}\n`).catch((error: NodeJS.ErrnoException) => {
      throw new CommandError(
        `cannot write ${JSON.stringify(values.out)}${error.code ? ` (${error.code})` : ''}`,
      );
    });
  }
  if (values.json) {
    out(text);
  } else {
    print('');
    for (const line of summaryLines(report)) print(line);
    if (report.typescript !== null) printReceiverConfiguration(report.typescript, report.contract, print);
    if (values.out !== undefined) print(`\nThe report is in ${values.out}.`);
  }
}

/** The receiver configuration the probe found, as TypeScript and as the contract's JSON. */
function printReceiverConfiguration(
  typescript: string,
  contract: ProbeReport['contract'],
  print: (line: string) => void,
): void {
  print('');
  print('Receiver configuration (TypeScript):');
  print('');
  for (const line of typescript.trimEnd().split('\n')) print(line && `  ${line}`);
  print('');
  print('The contract as JSON (createReceiver({ secret, contract }) takes it, or the whole report):');
  for (const line of jsonText(contract).split('\n')) print(`  ${line}`);
}

/** 0 when a receiver can adopt the report and no webhook is left; else 1, with the reasons on stderr. */
function exitCodeOf(report: ProbeReport, redact: Redact): number {
  const refusal = nothingToAdopt(report);
  if (refusal !== undefined)
    process.stderr.write(`${redact(`jobhook probe: nothing to adopt: ${refusal}`)}\n`);
  // A webhook left behind keeps the gateway sending to a listener that is gone: not a success.
  const left = report.probe.webhooksLeft;
  if (left.length > 0) process.stderr.write(`jobhook probe: ${webhooksLeftClause(left)}\n`);
  return refusal === undefined && left.length === 0 ? 0 : 1;
}

/** The error to end with: a probe's failure says what became of its webhooks. */
function probeFailure(error: unknown, { host, port }: ListenSettings, redact: Redact): unknown {
  if (!(error instanceof ProbeError)) return listenFailure(error, `${host}:${port}`);
  const cleanup =
    error.webhookId === null
      ? ''
      : error.webhookDeleted
        ? `; its webhook ${error.webhookId} was deleted`
        : `; ${webhooksLeftClause(error.webhooksLeft)}`;
  return new CommandError(redact(`probe failed: ${error.message}${cleanup}`));
}

/** Seconds as given (`1`, `0.5`), in ms; undefined when absent. */
function seconds(value: string | undefined, what: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+(\.\d+)?$/.test(value))
    throw new UsageError(`${what} must be a number of seconds: ${JSON.stringify(value)}`);
  return Math.round(Number(value) * 1000);
}

/** Asks on the terminal; refuses at once without one: spending credits needs a yes. */
async function confirmed(question: string): Promise<boolean> {
  if (!process.stdin.isTTY) {
    throw new UsageError(
      'probe submits a real image job, which spends credits: pass --yes to go on (no terminal to ask on)',
    );
  }
  const terminal = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await terminal.question(question)).trim());
  } finally {
    terminal.close();
  }
}

/** Why the report holds nothing a receiver can adopt as it is, or `undefined` when it does. */
function nothingToAdopt(report: Awaited<ReturnType<typeof runProbe>>): string | undefined {
  if (report.contract === null) return 'no contract was found (see the notes)';
  const { check } = report;
  if (check === null) return undefined;
  const failed = [
    check.completed !== 'handled' && `the completed delivery ${check.completed}`,
    check.failed !== null && check.failed !== 'handled' && `the failed delivery ${check.failed}`,
    check.forgedRefused === false && 'a forged copy was not refused',
  ].filter(Boolean);
  return failed.length === 0
    ? undefined
    : `a receiver made with the contract failed its check: ${failed.join(', ')}`;
}
