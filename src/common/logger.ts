import { secretBytes } from '../signatures/secret.js';

/** Console-compatible: `console` itself is a Logger. Only `error` is required. */
export interface Logger {
  /** Failures: a handler error with no `onError`, a consumed body, an unexpected error. */
  error(message: string): void;
  /** Refused deliveries (401, 400) with the detail of why; called when present. */
  warn?(message: string): void;
}

/** Quiet except for errors. Pass `logger: console` to also see refused deliveries, at `warn`. */
export const defaultLogger: Logger = { error: (message) => console.error(message) };

/** A sender-controlled value made safe for one log line: quoted, escaped, short. */
export function quote(value: string | undefined): string {
  if (value === undefined) return '(none)';
  return JSON.stringify(value.length > 100 ? `${value.slice(0, 100)}…` : value);
}

/**
 * Wraps `logger` so that no line carries one of `secrets`, in any form it may take: as given, and
 * its key bytes as UTF-8, base64 and hex. jobhook's own lines never hold a secret, but they quote
 * messages from code it does not control (a handler, a custom verifier, a dedupe store).
 */
export function redactingLogger(logger: Logger, secrets: readonly string[]): Logger {
  const forms = secretForms(secrets);
  if (forms.length === 0) return logger;
  const redact = (message: string) =>
    forms.reduce((text, form) => text.split(form).join('[redacted]'), message);
  const wrapped: Logger = { error: (message) => logger.error(redact(message)) };
  if (typeof logger.warn === 'function') wrapped.warn = (message) => logger.warn!(redact(message));
  return wrapped;
}

/** Longest first, so that a form inside another is not redacted piecemeal. Short ones are skipped. */
function secretForms(secrets: readonly string[]): string[] {
  const forms = new Set<string>();
  for (const secret of secrets) {
    forms.add(secret);
    let bytes: Buffer;
    try {
      bytes = secretBytes(secret);
    } catch {
      continue;
    }
    forms.add(bytes.toString('utf8'));
    forms.add(bytes.toString('base64'));
    forms.add(bytes.toString('base64url'));
    forms.add(bytes.toString('hex'));
  }
  return [...forms].filter((form) => form.length >= 8).sort((a, b) => b.length - a.length);
}

/** An error's message without its stack: log lines never carry stack traces. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
