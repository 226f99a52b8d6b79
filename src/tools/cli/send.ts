import { readFile } from 'node:fs/promises';
import { signDelivery } from 'jobhook/testing';
import { CommandError, UsageError, httpUrl, integer, out, parse, setting } from './args.js';
import { sendHelp } from './help.js';
import { GATEWAY_EVENT_TYPES } from 'jobhook';
import { readBodyCapped, samplePayload, messageOf } from 'jobhook/extend';

/**
 * Above the receiver's default handlerTimeoutMs (10 s): its 500 handler_timeout arrives before
 * `send` gives up (docs/timeouts.md).
 */
export const DEFAULT_SEND_TIMEOUT_MS = 15_000;

/** `jobhook send <url> [payload-file]`: one signed delivery; prints the answer. */
export async function send(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    type: { type: 'string' },
    secret: { type: 'string' },
    id: { type: 'string' },
    timestamp: { type: 'string' },
    timeout: { type: 'string' },
    'max-answer-bytes': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    process.stdout.write(sendHelp);
    return 0;
  }
  const [target, file, ...extra] = positionals;
  if (target === undefined) throw new UsageError('send needs the receiver URL');
  if (extra.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`);
  const url = httpUrl(target, 'the receiver URL');
  const secret = values.secret ?? setting('secret');
  if (secret === undefined) throw new UsageError('send needs --secret, or WEBHOOK_SECRET in the environment');
  const type = GATEWAY_EVENT_TYPES.find((known) => known === (values.type ?? 'job.completed'));
  if (type === undefined) {
    throw new UsageError(
      `--type must be one of ${GATEWAY_EVENT_TYPES.join(', ')}, not ${JSON.stringify(values.type)}`,
    );
  }
  if (values.type !== undefined && file !== undefined) {
    throw new UsageError('--type applies to the generated payload; a payload file is sent as it is');
  }
  const timestamp = integer(values.timestamp, '--timestamp');
  const timeoutMs = integer(values.timeout, '--timeout') ?? DEFAULT_SEND_TIMEOUT_MS;
  const maxAnswerBytes = integer(values['max-answer-bytes'], '--max-answer-bytes') ?? 1024 * 1024;

  // A repeated --id repeats the event too (its payload id follows the delivery id), so the
  // receiver, which dedupes by the event's id, answers the second send as a duplicate.
  const payload =
    file === undefined
      ? samplePayload(type, values.id === undefined ? {} : { id: `evt_${values.id}` })
      : await readPayload(file);
  let delivery: ReturnType<typeof signDelivery>;
  try {
    delivery = signDelivery({
      secret,
      payload,
      ...(values.id !== undefined && { id: values.id }),
      ...(timestamp !== undefined && { timestamp }),
    });
  } catch (error) {
    // For example a whsec_ secret that is not base64; the message never contains the secret.
    throw new UsageError(messageOf(error));
  }

  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: delivery.headers,
      body: delivery.body,
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    throw new CommandError(`could not deliver to ${url.href}: ${reason(error, timeoutMs)}`);
  }
  out(`${response.status} ${response.statusText}`.trim());
  // A receiver decides how much it answers: read at most maxAnswerBytes, never an endless stream.
  const body = await readBodyCapped(response, maxAnswerBytes).catch((error: unknown) => {
    throw new CommandError(`could not read the answer of ${url.href}: ${reason(error, timeoutMs)}`);
  });
  if (body === undefined) {
    throw new CommandError(
      `the answer is longer than ${maxAnswerBytes} bytes (--max-answer-bytes); stopped reading it`,
    );
  }
  if (body !== '') out(body);
  return response.ok ? 0 : 1;
}

async function readPayload(file: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`cannot read the payload file ${JSON.stringify(file)}${code ? ` (${code})` : ''}`);
  }
}

function reason(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && error.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  const cause =
    error instanceof Error ? (error.cause as { code?: string; message?: string } | undefined) : undefined;
  return cause?.code ?? cause?.message ?? messageOf(error);
}
