import { messageOf } from 'jobhook/extend';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { redactor } from 'jobhook/extend';

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
    const message = messageOf(error);
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

/** Why listening on `where` failed, in words with the fix; any other error as it is. */
export function listenFailure(error: unknown, where: string): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'EADDRINUSE') {
    return new CommandError(
      `${where} is already in use: pass another --port, or leave --port out for a free one`,
    );
  }
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') return new CommandError(`cannot listen on ${where}`);
  if (code === 'EACCES') return new CommandError(`no permission to listen on ${where}`);
  return error;
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

/**
 * What the CLI prints may come from a gateway or a receiver it does not control. A terminal obeys
 * control characters: an escape sequence can recolour or clear the screen, move the cursor to
 * overwrite a line, set the window title, or (in some terminals) write to the clipboard. So every
 * line the CLI prints goes through {@link printable}, and JSON output through {@link jsonText}.
 */

/**
 * ESC sequences, whole: CSI (`ESC [` parameters, final byte), the string commands OSC, DCS, SOS,
 * PM and APC (`ESC ]`, `P`, `X`, `^`, `_` up to BEL, `ESC \` or the end of the text), and the
 * two- or three-character ones (`ESC (B`, `ESC c`, ...). A lone ESC goes too.
 */
const ESCAPE_SEQUENCES =
  // eslint-disable-next-line no-control-regex
  /\u001b(?:\[[\u0030-\u003f]*[\u0020-\u002f]*[\u0040-\u007e]?|[\]PX^_][\s\S]*?(?:\u0007|\u001b\\|$)|[\u0020-\u002f]*[\u0030-\u007e])?/g;

/** C0 controls except tab and line feed, DEL, and the C1 controls (8-bit CSI, OSC, ...). */
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** `text` without escape sequences and control characters: tab and line feed stay. */
export function printable(text: string): string {
  return text.replace(ESCAPE_SEQUENCES, '').replace(CONTROLS, '');
}

/** The secrets this run was given (the API key a client was made with): no error line shows them. */
export const knownSecrets = redactor();

/** One safe line: control characters go before the redaction, or a key with a NUL inside passes it. */
export function safeLine(text: string): string {
  return knownSecrets(printable(text.split('\n')[0]!));
}

/**
 * `value` as indented JSON that a terminal shows as it is. JSON.stringify escapes C0 controls in
 * strings but not DEL or C1 ones; these are escaped too (`\u009b`), so the data stays intact.
 */
export function jsonText(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(
    /[\u007f-\u009f]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * Rows as aligned columns (two spaces apart), each cell printable and on one line: a line break
 * in data from elsewhere could fake a row.
 */
export function tableLines(rows: readonly (readonly string[])[]): string[] {
  const cells = rows.map((row) => row.map((cell) => printable(cell).replace(/[\t\n]/g, ' ')));
  const widths = cells[0]!.map((_, column) => Math.max(...cells.map((row) => row[column]!.length)));
  return cells.map((row) =>
    row
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join('  ')
      .trimEnd(),
  );
}
