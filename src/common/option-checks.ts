// The option checks: each throws JobhookError "<where>: `<name>` must be <rule>; got <kind>."
import { JobhookError } from './errors.js';
import { kindOf } from './values.js';

/** Refuses an options object with a key the function does not know, naming where it belongs. */
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
        ? home
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

/** The option names of `T`, checked by the compiler both ways: `optionNames<ClientOptions>()(['apiKey', ...])`. */
export function optionNames<T>() {
  return <const K extends readonly (keyof T & string)[]>(
    names: K &
      ([Exclude<keyof T, K[number]>] extends [never] ? unknown : { missing: Exclude<keyof T, K[number]> }),
  ): readonly string[] => names;
}

/** The unit of a time-out or timer that 0 turns off. */
export const MS_OR_NONE = 'ms, 0 for none';

/** The error for a value that breaks its option's rule (a rule such as "a positive integer (ms)"). */
export function invalidOption(where: string, name: string, rule: string, given: unknown): JobhookError {
  return new JobhookError('invalid_options', `${where}: \`${name}\` must be ${rule}; got ${kindOf(given)}.`);
}

/** Throws {@link invalidOption} unless `valid`; for rules no checker below states (a client, a pool…). */
export function checkOption(where: string, name: string, given: unknown, valid: boolean, rule: string): void {
  if (!valid) throw invalidOption(where, name, rule, given);
}

/** A whole number of at least `min` (default 1); `fallback` when absent, required when `undefined` (as below). */
export function wholeNumber(
  where: string,
  name: string,
  value: unknown,
  fallback: number | undefined,
  { min = 1, unit }: { min?: number; unit?: string } = {},
): number {
  if (value === undefined && fallback !== undefined) return fallback;
  if (Number.isSafeInteger(value) && (value as number) >= min) return value as number;
  const rule =
    min === 1
      ? 'a positive integer'
      : min === 0
        ? 'a whole number, 0 or more'
        : `a whole number, at least ${min}`;
  throw invalidOption(where, name, withUnit(rule, unit), value);
}

/** A whole number above 0 ("a positive integer (ms)"); `fallback` when absent. */
export function positiveInteger(
  where: string,
  name: string,
  value: unknown,
  fallback: number | undefined,
  unit?: string,
): number {
  return wholeNumber(where, name, value, fallback, { unit });
}

type NumberRule = { infinite?: boolean; unit?: string };
type NumberCheck = (
  where: string,
  name: string,
  value: unknown,
  fallback: number | undefined,
  rule?: NumberRule,
) => number;

/** A number of at least 0, finite unless `infinite` (then Infinity is "no limit"); `fallback` when absent. */
export const nonNegativeNumber: NumberCheck = (...check) => numberFrom(false, ...check);

/** A number above 0, finite unless `infinite` (then Infinity is "no limit"); `fallback` when absent. */
export const positiveNumber: NumberCheck = (...check) => numberFrom(true, ...check);

function numberFrom(
  above: boolean,
  where: string,
  name: string,
  value: unknown,
  fallback: number | undefined,
  { infinite = false, unit }: NumberRule = {},
): number {
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value === 'number' && (above ? value > 0 : value >= 0) && (infinite || Number.isFinite(value))) {
    return value;
  }
  const rule = above ? 'a number above 0' : 'a number, 0 or more';
  const notes = [unit, infinite ? 'Infinity for no limit' : undefined].filter(Boolean).join('; ');
  throw invalidOption(where, name, withUnit(rule, notes || undefined), value);
}

/** A number from 0 to 1 (a share of something); `fallback` when absent. */
export function fraction(where: string, name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value === 'number' && value >= 0 && value <= 1) return value;
  throw invalidOption(where, name, 'a number from 0 to 1', value);
}

/** An array of finite numbers of at least 0 (ms), non-empty with `nonEmpty`; a copy, or `fallback`. */
export function numberList(
  where: string,
  name: string,
  value: unknown,
  fallback: readonly number[],
  { nonEmpty = false, unit }: { nonEmpty?: boolean; unit?: string } = {},
): readonly number[] {
  if (value === undefined) return fallback;
  const valid =
    Array.isArray(value) &&
    (!nonEmpty || value.length > 0) &&
    value.every((item) => typeof item === 'number' && Number.isFinite(item) && item >= 0);
  if (valid) return [...(value as number[])];
  const rule = `${nonEmpty ? 'a non-empty' : 'an'} array of numbers, each 0 or more`;
  throw invalidOption(where, name, withUnit(rule, unit), value);
}

/** One of `choices` (strings); `fallback` when absent. */
export function oneOf<const C extends string>(
  where: string,
  name: string,
  value: unknown,
  fallback: C,
  choices: readonly C[],
): C {
  if (value === undefined) return fallback;
  if (typeof value === 'string' && (choices as readonly string[]).includes(value)) return value as C;
  throw invalidOption(where, name, choices.map((choice) => `"${choice}"`).join(' or '), value);
}

/** A function, or nothing: `undefined` when absent. */
export function func<F>(where: string, name: string, value: F | undefined): F | undefined {
  if (value === undefined || typeof value === 'function') return value;
  throw invalidOption(where, name, 'a function', value);
}

/** A string that `pattern` matches, described as `what` ("a stream name (letters, digits, _ -)"). */
export function nameMatching(
  where: string,
  name: string,
  value: unknown,
  fallback: string,
  pattern: RegExp,
  what: string,
): string {
  if (value === undefined) return fallback;
  if (typeof value === 'string' && pattern.test(value)) return value;
  throw invalidOption(where, name, what, value);
}

function withUnit(rule: string, unit: string | undefined): string {
  return unit === undefined ? rule : `${rule} (${unit})`;
}

/**
 * Why `value` is not an absolute `http:`/`https:` URL, with the fix, as "got a string …" without
 * the value (it may be a secret in the wrong place); `undefined` when it is one.
 * `localhost:3000/webhooks` parses as the scheme `localhost:`, so a missing scheme is looked for first.
 */
export function httpUrlProblem(value: string): string | undefined {
  const hostFirst = /^[A-Za-z0-9.-]+:\d+(?:[/?#]|$)|^[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?:[:/?#]|$)/;
  if (hostFirst.test(value)) {
    return 'got a string with no scheme: begin it with http:// (a local address) or https://';
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return value.startsWith('/') || value.startsWith('.')
      ? 'got a relative path: give the whole address, with scheme and host'
      : 'got a string that is not a URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `got a string with the scheme ${url.protocol.slice(0, 20)} where http: or https: is expected`;
  }
  return undefined;
}

/** An absolute `http:`/`https:` URL option, or a JobhookError that says what was given and what is expected. */
export function httpUrlOption(where: string, name: string, value: unknown, example: string): URL {
  const expected = `an absolute http:// or https:// URL, such as ${example}`;
  if (typeof value !== 'string') throw invalidOption(where, name, expected, value);
  const problem = httpUrlProblem(value);
  if (problem !== undefined) {
    throw new JobhookError('invalid_options', `${where}: \`${name}\` must be ${expected}; ${problem}.`);
  }
  return new URL(value);
}
