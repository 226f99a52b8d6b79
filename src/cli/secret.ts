import { randomBytes } from 'node:crypto';
import { UsageError, parse } from './args.js';
import { secretHelp } from './help.js';

/** A fresh Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
export function freshSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** `jobhook secret`: prints a fresh webhook secret. */
export function secret(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, { help: { type: 'boolean', short: 'h' } });
  if (values.help) {
    process.stdout.write(secretHelp);
    return Promise.resolve(0);
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  process.stdout.write(`${freshSecret()}\n`);
  return Promise.resolve(0);
}
