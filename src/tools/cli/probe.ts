import { writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline/promises';
import { redactor } from 'jobhook/extend';
import { ProbeError, runProbe } from '../probe/probe.js';
import { summaryLines, webhooksLeftClause } from '../probe/report.js';
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
  const { values, positionals } = parse(args, {
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
  if (values.help) {
    process.stdout.write(probeHelp);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
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
  const client = clientFrom(values);
  const apiKey = values['api-key'] ?? setting('apiKey');
  const baseUrl = httpUrl((values['base-url'] ?? setting('baseUrl'))!, 'the base URL').href.replace(
    /\/$/,
    '',
  );
  // Nothing the gateway echoes may show the key, wherever it ends up.
  const redact = redactor(apiKey === undefined ? [] : [apiKey]);
  const print = (line: string) => out(redact(printable(line)));

  const jobs = values['fail-prompt'] === undefined ? 'one image job' : 'two image jobs (one meant to fail)';
  if (
    !values.yes &&
    !(await confirmed(`This submits ${jobs} to ${baseUrl}, which spends credits. Go on? [y/N] `))
  ) {
    throw new CommandError('nothing submitted');
  }

  const stop = new AbortController();
  const interrupted = (signal: NodeJS.Signals) => stop.abort(new Error(`interrupted (${signal})`));
  // Every way a run is stopped ends with the webhook deleted: a closed terminal (SIGHUP) too, and
  // what is printed to a terminal that went away fails quietly rather than ending the process.
  const stopSignals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  for (const name of stopSignals) process.once(name, interrupted);
  const goneTerminal = () => undefined;
  process.stdout.on('error', goneTerminal);
  try {
    const report = await runProbe({
      client,
      baseUrl,
      host,
      port,
      ...(publicUrl !== undefined && { publicUrl }),
      job: {
        model: values.model ?? env('JOBHOOK_MODEL') ?? 'default',
        ...(values.prompt !== undefined && { prompt: values.prompt }),
        aspectRatio,
      },
      ...(values['fail-prompt'] !== undefined && { failPrompt: values['fail-prompt'] }),
      retriesForMs,
      ...(timeoutMs !== undefined && { timeoutMs }),
      signal: stop.signal,
      ...(!values.json && { progress: print }),
    });
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
      if (report.typescript !== null) {
        print('');
        print('Receiver configuration (TypeScript):');
        print('');
        for (const line of report.typescript.trimEnd().split('\n')) print(line && `  ${line}`);
        print('');
        print('The contract as JSON (createReceiver({ secret, contract }) takes it, or the whole report):');
        for (const line of jsonText(report.contract).split('\n')) print(`  ${line}`);
      }
      if (values.out !== undefined) print(`\nThe report is in ${values.out}.`);
    }
    const refusal = nothingToAdopt(report);
    if (refusal !== undefined)
      process.stderr.write(`${redact(`jobhook probe: nothing to adopt: ${refusal}`)}\n`);
    // A webhook left behind keeps the gateway sending to a listener that is gone: not a success.
    const left = report.probe.webhooksLeft;
    if (left.length > 0) process.stderr.write(`jobhook probe: ${webhooksLeftClause(left)}\n`);
    return refusal === undefined && left.length === 0 ? 0 : 1;
  } catch (error) {
    if (!(error instanceof ProbeError)) throw listenFailure(error, `${host}:${port}`);
    const cleanup =
      error.webhookId === null
        ? ''
        : error.webhookDeleted
          ? `; its webhook ${error.webhookId} was deleted`
          : `; ${webhooksLeftClause(error.webhooksLeft)}`;
    throw new CommandError(redact(`probe failed: ${error.message}${cleanup}`));
  } finally {
    for (const name of stopSignals) process.removeListener(name, interrupted);
    process.stdout.removeListener('error', goneTerminal);
  }
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
