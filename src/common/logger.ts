import { redactor, secretForms } from './redact.js';

/** Console-compatible. Only `error` is required; jobhook calls the others when present. */
export interface Logger {
  /** Failures: a handler error with no `onError`, a consumed body, an unexpected error. */
  error(message: string): void;
  /** Deliveries refused for a reason worth a look. */
  warn?(message: string): void;
  /** Notable events, such as a rejected delivery. */
  info?(message: string): void;
  /** Detail for debugging. */
  debug?(message: string): void;
}

/** Quiet except for errors. Pass `logger: console` to also see rejected deliveries. */
export const defaultLogger: Logger = { error: (message) => console.error(message) };

/** A sender-controlled value made safe for one log line: quoted, escaped, short. */
export function quote(value: string | undefined): string {
  if (value === undefined) return '(none)';
  return JSON.stringify(value.length > 100 ? `${value.slice(0, 100)}…` : value);
}

/**
 * Wraps `logger` so that no line carries one of `secrets`, in any form it may take (see
 * {@link secretForms}). jobhook's own lines never hold a secret, but they quote messages from code
 * it does not control (a handler, a custom verifier, a dedupe store).
 */
export function redactingLogger(logger: Logger, secrets: readonly string[]): Logger {
  if (secretForms(secrets).length === 0) return logger;
  const redact = redactor(secrets);
  const wrapped: Logger = { error: (message) => logger.error(redact(message)) };
  for (const level of ['warn', 'info', 'debug'] as const) {
    if (typeof logger[level] === 'function') wrapped[level] = (message) => logger[level]!(redact(message));
  }
  return wrapped;
}

/** An error's message without its stack: log lines never carry stack traces. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
