import { JobhookError } from '../common/errors.js';
import { quote } from '../common/logging.js';

const ONE_WAY = 'start the worker with receiver.work() (handoff.work(receiver))';

/**
 * A worker's name option (queue, stream, schema, ...) that differs from its hand-off's: refused,
 * naming both, since a worker on another queue than the hand-off's never sees its events, and
 * nothing says so (the receiver answered 200 already). `verb` links the option to its value.
 */
export function differentFromHandoff(
  where: string,
  option: string,
  given: string,
  what: string,
  handoffs: string,
  verb = 'is',
): JobhookError {
  return new JobhookError(
    'invalid_options',
    `${where}: \`${option}\` ${verb} ${quote(given)}, but the hand-off's ${what} is ${quote(handoffs)}, so the worker would never see its events; leave \`${option}\` out, or ${ONE_WAY}.`,
  );
}

/**
 * A worker given no hand-off, whose queue (stream) is not there: refused rather than left
 * listening, silently, on a queue nothing fills. `why` says what was found instead.
 */
export function noQueue(where: string, what: string, name: string, why: string): JobhookError {
  return new JobhookError(
    'invalid_options',
    `${where}: there is no ${what} ${quote(name)}${why}; pass the hand-off (\`handoff\`) or the name, or ${ONE_WAY}.`,
  );
}
