import { JobhookError, checkOption } from '../common/errors.js';

/**
 * Checks `createClient`'s `apiKey`: a non-empty string of printable ASCII, as a bearer token is.
 * fetch refuses a header value with a line break or a NUL (and its error quotes the value, key
 * included), or with a character beyond Latin-1, and silently trims whitespace at either end (so
 * the key sent differs from the one given, and an echo of it would escape redaction). The message
 * names the kind of character, never the key.
 */
export function checkApiKey(apiKey: unknown): string {
  const rule = 'the API key: printable ASCII with no spaces';
  checkOption('createClient', 'apiKey', apiKey, typeof apiKey === 'string' && apiKey.length > 0, rule);
  const fault = apiKeyFault(apiKey as string);
  if (fault !== undefined) {
    // The kind of fault stands where the kind of value would: it tells how to fix the key.
    throw new JobhookError(
      'invalid_options',
      `createClient: \`apiKey\` must be ${rule}; got a string that ${fault}. Check how it is read.`,
    );
  }
  return apiKey as string;
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
