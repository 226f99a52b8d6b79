/**
 * The one answer to "in which forms can a secret show up in a message?", used by the receiver's
 * logger and the gateway client. Web APIs only (TextEncoder, btoa, encodeURIComponent), so the
 * code runs wherever the receiver's core runs.
 */

/** What a redacted secret is replaced with. */
export const REDACTED = '[redacted]';

/**
 * A form shorter than this would match ordinary text by chance, so it is not searched for (a
 * secret that short protects nothing anyway). The secret as given is searched for from
 * {@link MIN_SECRET_LENGTH} characters: an API key is usually quoted whole.
 */
const MIN_FORM_LENGTH = 8;
const MIN_SECRET_LENGTH = 4;

/** A function that replaces every form of the given secrets in a text by `[redacted]`. */
export type Redact = (text: string) => string;

/** A {@link Redact} that more secrets can join (the secrets a receiver's `secret` function found). */
export interface Redactor extends Redact {
  /** Adds the forms of `secrets` not seen before; the ones already known cost a set lookup each. */
  add(secrets: readonly string[]): void;
}

/**
 * A redactor for `secrets`, and for those added later. The forms are indexed by their first
 * characters, so a text is scanned once whatever the number of secrets: a receiver serving
 * thousands of tenants redacts a line as fast as one serving one.
 */
export function redactor(secrets: readonly string[] = []): Redactor {
  const index = new FormIndex();
  const redact = ((text: string) => index.redact(text)) as Redactor;
  redact.add = (more) => {
    for (const secret of more) index.add(secret);
  };
  redact.add(secrets);
  return redact;
}

/** Forms of this many characters or more are found through the index by their first characters. */
const PREFIX = MIN_FORM_LENGTH;

/**
 * Every form of the secrets, found by exact lookup: at a place in a text whose first
 * {@link PREFIX} characters begin some form, each length a form there has is tried, longest first.
 * A form's lengths are few whatever the number of secrets, so the work per character stays flat.
 */
class FormIndex {
  readonly #secrets = new Set<string>();
  readonly #forms = new Set<string>();
  /** The lengths of the forms that start with each prefix, longest first. */
  readonly #lengths = new Map<string, number[]>();
  /** Secrets of fewer than {@link PREFIX} characters, as given (they have no other form searched for). */
  readonly #short: string[] = [];

  add(secret: string): void {
    if (typeof secret !== 'string' || this.#secrets.has(secret)) return;
    this.#secrets.add(secret);
    for (const form of secretForms([secret])) {
      if (this.#forms.has(form)) continue;
      this.#forms.add(form);
      if (form.length < PREFIX) {
        this.#short.push(form);
        continue;
      }
      const prefix = form.slice(0, PREFIX);
      const lengths = this.#lengths.get(prefix);
      if (!lengths) this.#lengths.set(prefix, [form.length]);
      else if (!lengths.includes(form.length)) {
        const shorter = lengths.findIndex((length) => length < form.length);
        lengths.splice(shorter === -1 ? lengths.length : shorter, 0, form.length);
      }
    }
  }

  redact(text: string): string {
    if (this.#secrets.size === 0) return text;
    let out = '';
    let copied = 0;
    for (let at = 0; at + MIN_SECRET_LENGTH <= text.length;) {
      const length = this.#matchAt(text, at);
      if (length === 0) {
        at++;
        continue;
      }
      out += text.slice(copied, at) + REDACTED;
      at += length;
      copied = at;
    }
    return copied === 0 ? text : out + text.slice(copied);
  }

  /** The length of the longest form at `at`, 0 when none starts there. */
  #matchAt(text: string, at: number): number {
    const lengths = at + PREFIX <= text.length ? this.#lengths.get(text.slice(at, at + PREFIX)) : undefined;
    if (lengths) {
      for (const length of lengths) {
        if (at + length <= text.length && this.#forms.has(text.slice(at, at + length))) return length;
      }
    }
    for (const form of this.#short) if (text.startsWith(form, at)) return form.length;
    return 0;
  }
}

/**
 * Every form in which `secrets` may appear in a message, longest first (so a form inside another
 * is not redacted piecemeal):
 * - as given, JSON-escaped (also with non-ASCII as `\uXXXX`), URL-encoded (percent-encoding in
 *   either case, and the `+`-for-space form encoding);
 * - the UTF-8 bytes of each of those, and of a `whsec_` secret's key bytes, as hex (either case),
 *   base64 and base64url, padded or not, and in each of the three alignments it takes inside a
 *   longer base64 text (an echoed request body, say), minus the edge characters it shares with
 *   its neighbours.
 */
export function secretForms(secrets: readonly string[]): string[] {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (typeof secret !== 'string' || secret.length === 0) continue;
    if (secret.length >= MIN_SECRET_LENGTH) forms.add(secret);
    const texts = textForms(secret);
    for (const text of texts) forms.add(text);
    const byteForms: Uint8Array[] = [...texts].map((text) => utf8.encode(text));
    const key = keyBytes(secret);
    if (key) {
      byteForms.push(key);
      const decoded = utf8Text(key);
      if (decoded !== undefined) for (const text of textForms(decoded)) forms.add(text);
    }
    for (const bytes of byteForms) for (const form of encodedForms(bytes)) forms.add(form);
  }
  return [...forms]
    .filter(
      (form) =>
        form.length >= MIN_FORM_LENGTH || (secrets.includes(form) && form.length >= MIN_SECRET_LENGTH),
    )
    .sort((a, b) => b.length - a.length);
}

const utf8 = new TextEncoder();

/** The secret as text: as given, JSON-escaped and URL-encoded. */
function textForms(secret: string): Set<string> {
  const json = JSON.stringify(secret).slice(1, -1);
  const percent = encodeURIComponent(secret);
  return new Set([
    secret,
    json,
    json.replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`),
    percent,
    percent.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()),
    new URLSearchParams({ s: secret }).toString().slice(2),
  ]);
}

/** Hex, base64 and base64url of `bytes`, standalone and as they sit inside longer encodings. */
function encodedForms(bytes: Uint8Array): string[] {
  const forms = [hex(bytes), hex(bytes).toUpperCase(), base64(bytes)];
  for (const offset of [0, 1, 2]) {
    // Inside a longer base64 text the secret starts at some byte offset mod 3: encode it behind
    // that many filler bytes and keep only the characters that depend on the secret alone.
    const shifted = new Uint8Array(offset + bytes.length);
    shifted.set(bytes, offset);
    const encoded = base64(shifted).replace(/=+$/, '');
    const start = offset === 0 ? 0 : 4;
    const whole = Math.floor(shifted.length / 3) * 4;
    const core = encoded.slice(start, whole);
    if (offset === 0) forms.push(encoded, toUrl(encoded));
    forms.push(core, toUrl(core));
  }
  return forms;
}

/** A `whsec_` secret's key bytes (base64 after the prefix), or undefined. */
function keyBytes(secret: string): Uint8Array | undefined {
  if (!secret.startsWith('whsec_')) return undefined;
  try {
    const binary = atob(secret.slice('whsec_'.length));
    return Uint8Array.from(binary, (char) => char.charCodeAt(0));
  } catch {
    return undefined;
  }
}

function utf8Text(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

function base64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function toUrl(base64Text: string): string {
  return base64Text.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function hex(bytes: Uint8Array): string {
  let text = '';
  for (const byte of bytes) text += byte.toString(16).padStart(2, '0');
  return text;
}

/**
 * A copy of JSON-like data (what a gateway or a sender answered) with `redact` applied to every
 * string in it, keys included, at any depth of arrays and plain objects. Other objects (a Date, a
 * class instance a schema made) are kept as they are; a cycle is kept as a cycle.
 */
export function redactValues<T>(value: T, redact: Redact): T {
  const copies = new Map<object, unknown>();
  const walk = (item: unknown): unknown => {
    if (typeof item === 'string') return redact(item);
    if (typeof item !== 'object' || item === null) return item;
    const copied = copies.get(item);
    if (copied !== undefined) return copied;
    if (Array.isArray(item)) {
      const array: unknown[] = [];
      copies.set(item, array);
      for (const entry of item) array.push(walk(entry));
      return array;
    }
    const prototype: unknown = Object.getPrototypeOf(item);
    if (prototype !== Object.prototype && prototype !== null) return item;
    const record: Record<string, unknown> = {};
    copies.set(item, record);
    for (const [key, entry] of Object.entries(item)) record[redact(key)] = walk(entry);
    return record;
  };
  return walk(value) as T;
}

/** How deep a chain of causes is copied; deeper ones are left out. */
const MAX_CAUSE_DEPTH = 4;

/**
 * A copy of a thrown value that is safe to keep as an error's `cause`, with `redact` applied to
 * every string in it: an Error becomes an Error with the same name, message and stack and the
 * same plain fields (`code`, `errno`, ...), its own `cause` and an AggregateError's `errors`
 * copied the same way; a plain object keeps its plain fields. Any other object it refers to (a
 * request, a socket, headers) is left out, since it could hold a secret that no text shows.
 */
export function redactCause(value: unknown, redact: Redact, depth = 0): unknown {
  if (typeof value === 'string') return redact(value);
  if (typeof value !== 'object' || value === null) return typeof value === 'function' ? undefined : value;
  try {
    const copy: Record<string, unknown> =
      value instanceof Error ? errorCopy(value, redact) : (Object.create(null) as Record<string, unknown>);
    for (const [key, field] of Object.entries(value)) {
      if (typeof field !== 'object' && typeof field !== 'function')
        copy[redact(key)] = redactCause(field, redact);
    }
    if (depth < MAX_CAUSE_DEPTH && value instanceof Error) {
      if ('cause' in value) copy.cause = redactCause(value.cause, redact, depth + 1);
      if (value instanceof AggregateError && Array.isArray(value.errors)) {
        copy.errors = value.errors.map((error) => redactCause(error, redact, depth + 1));
      }
    }
    return copy;
  } catch {
    // A getter that throws, a proxy: nothing of it is kept.
    return new Error('An error that could not be copied.');
  }
}

function errorCopy(error: Error, redact: Redact): Error & Record<string, unknown> {
  const copy = new Error(redact(String(error.message))) as Error & Record<string, unknown>;
  // Not enumerable, as on the original: util.inspect shows the name through the stack.
  Object.defineProperty(copy, 'name', {
    value: redact(String(error.name)),
    configurable: true,
    writable: true,
  });
  copy.stack = typeof error.stack === 'string' ? redact(error.stack) : copy.stack;
  return copy;
}
