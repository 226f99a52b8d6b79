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

/** An error's message without its stack: log lines never carry stack traces. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
