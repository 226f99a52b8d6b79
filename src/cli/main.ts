#!/usr/bin/env node
/**
 * The `jobhook` command. Every failure ends as one line on standard error and a non-zero exit code:
 * 2 for a mistake in the command line, 1 for anything else. Never a stack trace, never a secret.
 */
import { UsageError } from './args.js';
import { run } from './run.js';
import { printable } from './terminal.js';

function fail(error: unknown): void {
  // A message may quote the gateway (a GatewayError's text): first line, no control characters.
  const text = error instanceof Error ? error.message : String(error);
  const message = printable(text.split('\n')[0]!).replace(/\.$/, '');
  if (error instanceof UsageError) {
    const help = error.command ? `jobhook ${error.command} --help` : 'jobhook --help';
    process.stderr.write(`jobhook: ${message} (see \`${help}\`)\n`);
    process.exitCode = 2;
  } else {
    process.stderr.write(`jobhook: ${message}\n`);
    process.exitCode = 1;
  }
}

process.on('uncaughtException', (error) => {
  fail(error);
  process.exit();
});

run(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
}, fail);
