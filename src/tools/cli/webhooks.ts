import {
  createClient,
  GatewayError,
  registerWebhook,
  type GatewayClient,
  type Webhook,
} from 'jobhook/client';
import { CommandError, UsageError, httpUrl, knownSecrets, out, parse, setting } from './args.js';
import { jsonText, tableLines } from './args.js';
import { webhooksDeleteHelp, webhooksHelp, webhooksListHelp, webhooksRegisterHelp } from './help.js';
import { GATEWAY_EVENT_TYPES } from 'jobhook';

/** The options every command that calls the gateway takes. */
export const connection = {
  'api-key': { type: 'string' },
  'base-url': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** `jobhook webhooks list|register|delete`, against any gateway. */
export async function webhooks(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined) {
    process.stderr.write(webhooksHelp);
    return 2;
  }
  if (sub === '-h' || sub === '--help' || sub === 'help') return help(webhooksHelp);
  const command = Object.hasOwn(subcommands, sub) ? subcommands[sub] : undefined;
  if (!command) throw new UsageError(`unknown command "webhooks ${sub}"`, 'webhooks');
  try {
    return await command(rest);
  } catch (error) {
    if (error instanceof UsageError) error.command ??= `webhooks ${sub}`;
    if (error instanceof GatewayError) throw new CommandError(error.message);
    throw error;
  }
}

const subcommands: Record<string, (args: string[]) => Promise<number>> = {
  async list(args) {
    const { values, positionals } = parse(args, connection);
    if (values.help) return help(webhooksListHelp);
    noPositionals(positionals);
    const list = await clientFrom(values).webhooks.list();
    if (values.json) out(jsonText(list));
    else printTable(list);
    return 0;
  },

  async register(args) {
    const { values, positionals } = parse(args, {
      ...connection,
      secret: { type: 'string' },
      events: { type: 'string' },
      'rotate-secret': { type: 'boolean' },
    });
    if (values.help) return help(webhooksRegisterHelp);
    const [target, ...extra] = positionals;
    if (target === undefined) throw new UsageError('webhooks register needs the receiver URL');
    noPositionals(extra);
    const url = httpUrl(target, 'the receiver URL').href;
    const events = (values.events ?? GATEWAY_EVENT_TYPES.join(','))
      .split(',')
      .map((event) => event.trim())
      .filter(Boolean);
    if (events.length === 0) throw new UsageError('--events needs at least one event type');
    const secret = values.secret ?? setting('secret');
    const result = await registerWebhook(clientFrom(values), {
      url,
      events,
      ...(secret !== undefined && { secret }),
      ...(values['rotate-secret'] && { rotateSecret: true }),
      // A command answers the person who typed it: fail at once rather than wait out the startup
      // retries an app needs while its gateway comes up (the client still retries each GET).
      startupRetries: false,
    });
    if (values.json) {
      out(jsonText(result));
    } else {
      const { webhook, created, deleted } = result;
      out(
        `${created ? 'Created' : 'Reused'} webhook ${webhook.id}: ${webhook.events.join(',')} -> ${webhook.url}`,
      );
      if (deleted.length > 0)
        out(`Deleted older webhook${deleted.length > 1 ? 's' : ''} ${deleted.join(', ')}`);
      if (secret === undefined) out('Warning: no secret given, so deliveries to it are not signed.');
    }
    return 0;
  },

  async delete(args) {
    const { values, positionals } = parse(args, connection);
    if (values.help) return help(webhooksDeleteHelp);
    const [id, ...extra] = positionals;
    if (id === undefined) throw new UsageError('webhooks delete needs the webhook id');
    noPositionals(extra);
    if (!/^\d+$/.test(id)) throw new UsageError(`the webhook id must be a number, not ${JSON.stringify(id)}`);
    const result = await clientFrom(values).webhooks.delete(Number(id));
    if (values.json) out(jsonText(result));
    else out(`Deleted webhook ${result.id}`);
    return 0;
  },
};

/** A client from --api-key/--base-url or GATEWAY_API_KEY/GATEWAY_URL; a UsageError without them. */
export function clientFrom(values: {
  'api-key'?: string | undefined;
  'base-url'?: string | undefined;
}): GatewayClient {
  const apiKey = values['api-key'] ?? setting('apiKey');
  const baseUrl = values['base-url'] ?? setting('baseUrl');
  if (apiKey === undefined) throw new UsageError('no API key: pass --api-key or set GATEWAY_API_KEY');
  if (baseUrl === undefined) throw new UsageError('no gateway address: pass --base-url or set GATEWAY_URL');
  knownSecrets.add([apiKey]);
  return createClient({ apiKey, baseUrl: httpUrl(baseUrl, 'the base URL').href });
}

function help(text: string): number {
  process.stdout.write(text);
  return 0;
}

function noPositionals(positionals: string[]): void {
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
}

function printTable(list: Webhook[]): void {
  if (list.length === 0) {
    out('No webhooks.');
    return;
  }
  const rows = [
    ['ID', 'STATUS', 'EVENTS', 'SENT', 'FAILED', 'URL', 'LAST ERROR'],
    ...list.map((webhook) => [
      String(webhook.id),
      String(webhook.status),
      Array.isArray(webhook.events) ? webhook.events.join(',') : String(webhook.events ?? '-'),
      String(webhook.total_sent ?? '-'),
      String(webhook.total_failed ?? '-'),
      String(webhook.url),
      String(webhook.last_error ?? '-'),
    ]),
  ];
  for (const line of tableLines(rows)) out(line);
}
