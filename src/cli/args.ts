import { parseArgs, type ParseArgsConfig } from 'node:util';
import { printable } from './terminal.js';

/** A mistake in how the command was called: printed as one line, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
  constructor(
    message: string,
    /** The command whose help to point at, such as `send` or `webhooks list`; the dispatcher sets it. */
    public command?: string,
  ) {
    super(message);
  }
}

/** A failure while doing what was asked (unreachable URL, gateway error): one line, exit code 1. */
export class CommandError extends Error {
  override name = 'CommandError';
}

type Options = NonNullable<ParseArgsConfig['options']>;
type Parsed<O extends Options> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>
>;

/** `parseArgs` in strict mode whose errors become one-line UsageErrors. */
export function parse<O extends Options>(args: string[], options: O): Parsed<O> {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    // Node's messages go on with advice about `--`; the first sentence names the problem.
    const message = error instanceof Error ? error.message : String(error);
    throw new UsageError(message.split(/\.\s/)[0]!.replace(/\.$/, ''));
  }
}

/** The environment variable, or undefined when it is unset or empty. */
export function env(name: string): string | undefined {
  const value = process.env[name];
  return value === undefined || value === '' ? undefined : value;
}

/**
 * The settings the CLI reads from the environment, by the names the README uses; each older
 * `JOBHOOK_*` name still works, with a deprecation note on stderr.
 */
export const SETTINGS = {
  baseUrl: { name: 'GATEWAY_URL', old: 'JOBHOOK_BASE_URL' },
  apiKey: { name: 'GATEWAY_API_KEY', old: 'JOBHOOK_API_KEY' },
  secret: { name: 'WEBHOOK_SECRET', old: 'JOBHOOK_SECRET' },
} as const;

const noted = new Set<string>();

/** A setting from its environment variable, or from the deprecated name it replaces. */
export function setting(which: keyof typeof SETTINGS): string | undefined {
  const { name, old } = SETTINGS[which];
  const value = env(name);
  if (value !== undefined) return value;
  const legacy = env(old);
  if (legacy !== undefined && !noted.has(old)) {
    noted.add(old);
    process.stderr.write(`jobhook: note: ${old} is deprecated; set ${name} instead\n`);
  }
  return legacy;
}

/** Parses an absolute http(s) URL, or throws a UsageError that names `what`. */
export function httpUrl(value: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`${what} is not an absolute URL: ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`${what} must be an http or https URL: ${JSON.stringify(value)}`);
  }
  return url;
}

/** Parses a non-negative integer option. */
export function integer(value: string | undefined, what: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value))
    throw new UsageError(`${what} must be a non-negative integer: ${JSON.stringify(value)}`);
  return Number(value);
}

/** Writes a line to standard output, without control characters (it may quote a gateway). */
export function out(line = ''): void {
  process.stdout.write(`${printable(line)}\n`);
}
