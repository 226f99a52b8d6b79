// The one redaction of secrets in every form they may take in a text (Web APIs only).
import { toBase64, toHex, utf8Bytes, whsecBytes } from './bytes.js';

/** What a redacted secret is replaced with. */
export const REDACTED = '[redacted]';

// Shorter forms would match ordinary text by chance; a secret as given is searched from 4 characters.
const MIN_FORM_LENGTH = 8;
const MIN_SECRET_LENGTH = 4;

/** A function that replaces every form of the given secrets in a text by `[redacted]`. */
export type Redact = (text: string) => string;

/** A {@link Redact} that more secrets can join (the secrets a receiver's `secret` function found). */
export interface Redactor extends Redact {
  /** Adds the forms of `secrets` not seen before. */
  add(secrets: readonly string[]): void;
}

/** A redactor for `secrets` and those added later; a text is scanned once whatever the number of secrets. */
export function redactor(secrets: readonly string[] = []): Redactor {
  const index = new FormIndex();
  const redact = ((text: string) => index.redact(text)) as Redactor;
  redact.add = (more) => {
    for (const secret of more) index.add(secret);
  };
  redact.add(secrets);
  return redact;
}

const PREFIX = MIN_FORM_LENGTH;

/** Every form of the secrets, indexed by their first PREFIX characters and tried longest first. */
class FormIndex {
  readonly #secrets = new Set<string>();
  readonly #forms = new Set<string>();
  readonly #lengths = new Map<string, number[]>();
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

/** Every form in which `secrets` may appear in a message (escaped, encoded, inside base64), longest first. */
export function secretForms(secrets: readonly string[]): string[] {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (typeof secret !== 'string' || secret.length === 0) continue;
    if (secret.length >= MIN_SECRET_LENGTH) forms.add(secret);
    const texts = textForms(secret);
    for (const text of texts) forms.add(text);
    const byteForms: Uint8Array[] = [...texts].map((text) => utf8Bytes(text));
    const key = whsecBytes(secret);
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

function encodedForms(bytes: Uint8Array): string[] {
  const forms = [toHex(bytes), toHex(bytes).toUpperCase(), toBase64(bytes)];
  for (const offset of [0, 1, 2]) {
    // Behind `offset` filler bytes, keeping only the characters that depend on the secret alone.
    const shifted = new Uint8Array(offset + bytes.length);
    shifted.set(bytes, offset);
    const encoded = toBase64(shifted).replace(/=+$/, '');
    const start = offset === 0 ? 0 : 4;
    const whole = Math.floor(shifted.length / 3) * 4;
    const core = encoded.slice(start, whole);
    if (offset === 0) forms.push(encoded, toUrl(encoded));
    forms.push(core, toUrl(core));
  }
  return forms;
}

function utf8Text(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

function toUrl(base64Text: string): string {
  return base64Text.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** A copy of JSON-like data with `redact` applied to every string, keys included; other objects as they are. */
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

const MAX_CAUSE_DEPTH = 4;

/** A redacted copy of a thrown value, safe as a `cause`: any object it refers to (a socket) is left out. */
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
