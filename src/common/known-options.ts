import { JobhookError } from './errors.js';

/**
 * Refuses an options object with a key the function does not know. TypeScript reports a misspelt
 * or misplaced option, but in JavaScript `register({ onRetry })` (which belongs in
 * `startupRetries: { onRetry }`) used to be ignored silently. The message names the option, where
 * it belongs when `homes` knows (or the known one it most resembles), and never a value.
 *
 * @param where how the user wrote the call, e.g. "register" or "createClient"
 * @param homes unknown keys that belong somewhere else, and where, e.g. { onRetry: 'startupRetries: { onRetry }' }
 */
export function refuseUnknownOptions(
  given: unknown,
  known: readonly string[],
  where: string,
  homes: Readonly<Record<string, string>> = {},
): void {
  if (given === undefined || given === null || typeof given !== 'object') return;
  for (const key of Object.keys(given)) {
    if (known.includes(key)) continue;
    const home = Object.hasOwn(homes, key) ? homes[key] : undefined;
    const hint =
      home !== undefined
        ? `it belongs in \`${home}\``
        : (nearest(key, known)?.replace(/^/, 'did you mean `').concat('`?') ??
          `its options are ${known.map((name) => `\`${name}\``).join(', ')}`);
    throw new JobhookError('invalid_options', `${where} has no option \`${printable(key)}\`: ${hint}`);
  }
}

/** The known name a typo most likely meant: same letters ignoring case, or at most two edits away. */
function nearest(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  let best: string | undefined;
  let bestDistance = 3;
  for (const name of known) {
    const distance = name.toLowerCase() === lower ? 0 : editDistance(lower, name.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [name, distance];
  }
  return best;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(
        previous[j]! + 1,
        row[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = row;
  }
  return previous[b.length]!;
}

/** A key as it may be shown: a long or unprintable one is cut (it came from the caller's object). */
function printable(key: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = key.replace(/[\u0000-\u001f\u007f]/g, '?');
  return clean.length > 40 ? `${clean.slice(0, 40)}…` : clean;
}

/**
 * The option names of `T`, checked by the compiler both ways: a name `T` lacks does not compile,
 * and neither does a list that misses one of `T`'s options (so a new option cannot be refused as
 * unknown by mistake). Use: `const NAMES = optionNames<ClientOptions>()(['apiKey', ...])`.
 */
export function optionNames<T>() {
  return <const K extends readonly (keyof T & string)[]>(
    names: K &
      ([Exclude<keyof T, K[number]>] extends [never] ? unknown : { missing: Exclude<keyof T, K[number]> }),
  ): readonly string[] => names;
}
