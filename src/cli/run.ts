import { createRequire } from 'node:module';
import { UsageError } from './args.js';
import { failed } from './failed.js';
import { gateway } from './gateway.js';
import { generate } from './generate.js';
import { jobs } from './jobs.js';
import { mainHelp } from './help.js';
import { probe } from './probe.js';
import { secret } from './secret.js';
import { send } from './send.js';
import { webhooks } from './webhooks.js';

/** A command: takes its own arguments, resolves to the exit code. */
export type Command = (args: string[]) => Promise<number>;

const commands: Record<string, Command> = { failed, gateway, generate, jobs, probe, secret, send, webhooks };

/** Runs `jobhook <args>`; rejects with a UsageError for a bad command line. */
export async function run(args: string[]): Promise<number> {
  const [name, ...rest] = args;
  if (name === undefined) {
    process.stderr.write(mainHelp);
    return 2;
  }
  // `jobhook help probe` is `jobhook probe --help`.
  if (name === 'help' && rest.length > 0) return run([...rest, '--help']);
  if (name === '-h' || name === '--help' || name === 'help') {
    process.stdout.write(mainHelp);
    return 0;
  }
  if (name === '-v' || name === '--version') {
    const { version } = createRequire(import.meta.url)('jobhook/package.json') as { version: string };
    process.stdout.write(`${version}\n`);
    return 0;
  }
  const command = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!command) throw new UsageError(`unknown command ${JSON.stringify(name)}`);
  try {
    return await command(rest);
  } catch (error) {
    if (error instanceof UsageError) error.command ??= name;
    throw error;
  }
}
