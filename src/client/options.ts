import { JobhookError } from '../common/errors.js';

/**
 * Checks `createClient`'s `apiKey`: a non-empty string of printable ASCII, as a bearer token is.
 * fetch refuses a header value with a line break or a NUL (and its error quotes the value, key
 * included), or with a character beyond Latin-1, and silently trims whitespace at either end (so
 * the key sent differs from the one given, and an echo of it would escape redaction). The message
 * names the kind of character, never the key.
 */
export function checkApiKey(apiKey: unknown): string {
  if (typeof apiKey !== 'string' || apiKey.length === 0) {
    throw new JobhookError('invalid_options', 'createClient needs `apiKey`: a non-empty string.');
  }
  const fault = apiKeyFault(apiKey);
  if (fault !== undefined) {
    throw new JobhookError(
      'invalid_options',
      `createClient's \`apiKey\` ${fault}; an API key is printable ASCII with no spaces. ` +
        'Check how it is read (the key itself is not shown here).',
    );
  }
  return apiKey;
}

/** What is wrong with a key's characters, or undefined when they are all printable ASCII. */
function apiKeyFault(apiKey: string): string | undefined {
  if (/^\s|\s$/.test(apiKey)) {
    return 'has whitespace at its start or end (a line break from a file or an environment variable?): trim it';
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(apiKey)) return 'contains a line break or another control character';
  if (/\s/.test(apiKey)) return 'contains a space';
  if (/[^\u0021-\u007e]/.test(apiKey)) {
    return 'contains a character outside ASCII (a typographic quote or an invisible space?)';
  }
  return undefined;
}

/**
 * A number option of the client in milliseconds or bytes: `fallback` when absent, else a positive
 * finite number (a whole one for `whole`). Throws a JobhookError (`invalid_options`) naming it.
 */
export function positiveOption(
  name: string,
  value: unknown,
  fallback: number,
  { whole = false, unit }: { whole?: boolean; unit: string },
): number {
  if (value === undefined) return fallback;
  const valid = whole ? Number.isSafeInteger(value) : Number.isFinite(value);
  if (!valid || (value as number) <= 0) {
    throw new JobhookError(
      'invalid_options',
      `\`${name}\` must be a ${whole ? 'whole ' : ''}number of ${unit} above 0, such as ${fallback}.`,
    );
  }
  return value as number;
}
