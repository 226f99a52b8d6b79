// The logger jobhook writes to, and the lines it is given made safe (redaction: redaction.ts).
import type { Redact } from './redaction.js';

/** Console-compatible: `console` itself is a Logger. Only `error` is required. */
export interface Logger {
  /** Failures: a handler error with no `onError`, a consumed body, an unexpected error. */
  error(message: string): void;
  /** Refused deliveries (401, 400) with the detail of why; called when present. */
  warn?(message: string): void;
}

/** The console: failures at error, refused deliveries at warn, so a wrong secret shows from the first delivery. */
export const defaultLogger: Logger = {
  error: (message) => console.error(message),
  warn: (message) => console.warn(message),
};

/** A sender-controlled value made safe for one log line: quoted, escaped, short. */
export function quote(value: string | undefined): string {
  if (value === undefined) return '(none)';
  return JSON.stringify(value.length > 100 ? `${value.slice(0, 100)}…` : value);
}

/** Wraps `logger` so that no line carries a secret `redact` knows: lines quote code jobhook does not control. */
export function redactingLogger(logger: Logger, redact: Redact): Logger {
  const wrapped: Logger = { error: (message) => logger.error(redact(message)) };
  if (typeof logger.warn === 'function') wrapped.warn = (message) => logger.warn!(redact(message));
  return wrapped;
}

/** An error's message without its stack; never throws, even for a value that cannot be made a string. */
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

/** Wraps `logger` so that writing never throws nor rejects: a failing logger must not change an answer. */
export function safeLogger(logger: Logger): SafeLogger {
  const level =
    (name: keyof Logger) =>
    (message: string): void => {
      try {
        if (typeof logger[name] !== 'function') return;
        const result: unknown = logger[name](message);
        if (result !== undefined) Promise.resolve(result).then(undefined, ignore);
      } catch {
        // Nowhere left to report it.
      }
    };
  return { error: level('error'), warn: level('warn') };
}

/** Does nothing: the handler of a settlement or a failure deliberately not acted on. */
export function ignore(): void {}
