import { secretBytes } from '../signatures/secret.js';
import { isThenable } from './thenable.js';

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
  for (const level of ['warn', 'info', 'debug'] as const) {
    if (typeof logger[level] === 'function') wrapped[level] = (message) => logger[level]!(redact(message));
  }
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

/**
 * An error's message without its stack: log lines never carry stack traces. Never throws, even for
 * a thrown value that cannot be made a string (`Object.create(null)`, a throwing `toString`).
 */
export function messageOf(error: unknown): string {
  try {
    return error instanceof Error ? String(error.message) : String(error);
  } catch {
    return 'a value that cannot be printed';
  }
}

/** The levels jobhook writes at, each always present and never throwing. */
export interface SafeLogger {
  error(message: string): void;
  warn(message: string): void;
}

/**
 * Wraps `logger` so that writing never throws nor rejects: a failing logger must not change an
 * answer or crash the process. A level the logger lacks does nothing.
 */
export function safeLogger(logger: Logger): SafeLogger {
  const level =
    (name: keyof Logger) =>
    (message: string): void => {
      try {
        if (typeof logger[name] !== 'function') return;
        const result: unknown = logger[name](message);
        // An async logger's rejection would be an unhandled rejection.
        if (isThenable(result)) Promise.resolve(result).then(undefined, ignore);
      } catch {
        // Nowhere left to report it.
      }
    };
  return { error: level('error'), warn: level('warn') };
}

function ignore(): void {}
