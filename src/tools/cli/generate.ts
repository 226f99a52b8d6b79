import { GatewayError, JobFailedError, WaitTimeoutError } from 'jobhook/client';
import { CommandError, UsageError, env, integer, out, parse, jsonText } from './args.js';
import { generateHelp, secretHelp } from './help.js';
import { clientFrom, connection } from './webhooks.js';
import { randomBytes } from 'node:crypto';

/** `jobhook generate "<prompt>" [--wait]`: submits an image job; with --wait, prints its image URL. */
export async function generate(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    ...connection,
    model: { type: 'string' },
    'aspect-ratio': { type: 'string' },
    wait: { type: 'boolean' },
    timeout: { type: 'string' },
  });
  if (values.help) {
    process.stdout.write(generateHelp);
    return 0;
  }
  const [prompt, ...extra] = positionals;
  if (prompt === undefined || prompt.trim() === '') throw new UsageError('generate needs the prompt');
  if (extra.length > 0) {
    throw new UsageError(
      `unexpected argument ${JSON.stringify(extra[0])} (quote the prompt as one argument)`,
    );
  }
  const aspectRatio = values['aspect-ratio'] ?? '1:1';
  if (!/^[1-9]\d*:[1-9]\d*$/.test(aspectRatio)) {
    throw new UsageError(
      `--aspect-ratio must be <width>:<height>, such as 16:9, not ${JSON.stringify(aspectRatio)}`,
    );
  }
  const timeoutMs = integer(values.timeout, '--timeout');
  if (timeoutMs === 0) throw new UsageError('--timeout must be above 0');
  if (timeoutMs !== undefined && !values.wait) throw new UsageError('--timeout applies to --wait');
  const client = clientFrom(values);
  const input = {
    model: values.model ?? env('JOBHOOK_MODEL') ?? 'default',
    prompt,
    aspect_ratio: aspectRatio,
  };

  try {
    const submitted = await client.images.generate(input);
    if (!values.wait) {
      if (values.json) out(jsonText(submitted));
      else
        out(
          `Submitted ${submitted.task_id} (${submitted.credits_used} credits, ${submitted.remaining_credits} left)`,
        );
      return 0;
    }
    if (!values.json) out(`Submitted ${submitted.task_id}; waiting for it to end…`);
    // No receiver here: polling, starting at one second and backing off.
    const task = await client.images.waitFor(submitted.task_id, {
      ...(timeoutMs !== undefined && { timeoutMs }),
    });
    if (values.json) out(jsonText(task));
    else out(task.image_url);
    return 0;
  } catch (error) {
    if (error instanceof JobFailedError) {
      throw new CommandError(`job ${error.taskId} failed (${error.code}): ${error.message}`);
    }
    if (error instanceof WaitTimeoutError) {
      throw new CommandError(
        `job ${error.taskId} did not end within ${error.timeoutMs} ms; it keeps running at the gateway`,
      );
    }
    if (error instanceof GatewayError) throw new CommandError(error.message);
    throw error;
  }
}

/** A fresh Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
export function freshSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** `jobhook secret`: prints a fresh webhook secret. */
export function secret(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, { help: { type: 'boolean', short: 'h' } });
  if (values.help) {
    process.stdout.write(secretHelp);
    return Promise.resolve(0);
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  process.stdout.write(`${freshSecret()}\n`);
  return Promise.resolve(0);
}
