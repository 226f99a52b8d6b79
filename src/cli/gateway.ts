import { startGateway } from 'jobhook/testing';
import { UsageError, integer, out, parse } from './args.js';
import { gatewayHelp } from './help.js';

/** `jobhook gateway`: the simulator in the foreground until SIGINT or SIGTERM. */
export async function gateway(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    credits: { type: 'string' },
    'fail-when': { type: 'string' },
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

  const simulator = await startGateway({
    console: true,
    ...(credits !== undefined && { credits }),
    jobs: {
      outcome: (job) =>
        job.prompt.includes(failWhen)
          ? { status: 'failed', error: { code: 'generation_failed', message: 'The prompt asked to fail.' } }
          : { status: 'completed' },
    },
  });
  out('Gateway simulator running; Ctrl+C stops it.');
  out(`JOBHOOK_BASE_URL=${simulator.baseUrl}`);
  out(`JOBHOOK_API_KEY=${simulator.apiKey}`);
  out(`Console: ${simulator.consoleUrl} (open it in a browser)`);

  // What the simulator answered and delivered, as it happens (it keeps both as growing lists).
  let requests = 0;
  let deliveries = 0;
  const report = () => {
    if (values.quiet) return;
    for (const { method, path, status } of simulator.requests.slice(requests)) {
      out(`  ${method} ${path} -> ${status}`);
    }
    for (const attempt of simulator.deliveries.slice(deliveries)) {
      const outcome = attempt.status ?? attempt.error ?? (attempt.ok ? 'ok' : 'failed');
      out(
        `  delivery ${attempt.type} ${attempt.taskId} -> webhook ${attempt.webhookId}: ` +
          `${outcome} (attempt ${attempt.attempt})`,
      );
    }
    requests = simulator.requests.length;
    deliveries = simulator.deliveries.length;
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
