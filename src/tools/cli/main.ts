#!/usr/bin/env node
import { messageOf } from 'jobhook/extend';
import { safeLine, UsageError } from './args.js';
import { createRequire } from 'node:module';
import { failed } from './failed.js';
import { gateway } from './gateway.js';
import { inbox } from './inbox.js';
import { generate, secret } from './generate.js';
import { jobs } from './jobs.js';
import { mainHelp } from './help.js';
import { probe } from './probe.js';
import { send } from './send.js';
import { webhooks } from './webhooks.js';

/**
 * The `jobhook` command. Every failure ends as one line on standard error and a non-zero exit code:
 * 2 for a mistake in the command line, 1 for anything else. Never a stack trace, never a secret.
 */

function fail(error: unknown): void {
  // A message may quote the gateway (a GatewayError's text): first line, no control characters, no secret.
  const message = safeLine(messageOf(error)).replace(/\.$/, '');
  if (error instanceof UsageError) {
    const help = error.command ? `jobhook ${error.command} --help` : 'jobhook --help';
    process.stderr.write(`jobhook: ${message} (see \`${help}\`)\n`);
    process.exitCode = 2;
  } else {
    process.stderr.write(`jobhook: ${message}\n`);
    process.exitCode = 1;
  }
}

/** A command: takes its own arguments, resolves to the exit code. */
export type Command = (args: string[]) => Promise<number>;

const commands: Record<string, Command> = {
  failed,
  gateway,
  generate,
  inbox,
  jobs,
  probe,
  secret,
  send,
  webhooks,
};

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

process.on('uncaughtException', (error) => {
  fail(error);
  process.exit();
});

run(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
}, fail);
