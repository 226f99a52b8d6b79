import { webhookCounters } from '../reconcile/gateway.js';

/**
 * Whether the gateway bears out a signature alarm. Anyone can post deliveries that fail to verify,
 * but only the gateway's own refused deliveries grow its webhook's `total_failed` and leave a
 * `last_error` naming the 401: so a receiver that registered its webhook reads the counters when
 * it registers, and again when the alarm is due.
 */
export interface AlarmWitness {
  watching(): boolean;
  /** The receiver registered (or reused) the webhook at `url` through `client`: its counters are read now. */
  watch(client: unknown, url: string): Promise<void>;
  /** Whether some watched webhook failed more deliveries since the last reading, the last with a 401. `false` without one. */
  corroborates(): Promise<boolean>;
}

interface Watched {
  client: unknown;
  url: string;
  totalFailed: number | undefined;
}

const MAX_WATCHED = 100;

export function alarmWitness(): AlarmWitness {
  const watched = new Map<string, Watched>();

  const read = (entry: Watched) => webhookCounters(entry.client, entry.url);

  return {
    watching: () => watched.size > 0,
    async watch(client, url) {
      if (typeof (client as { webhooks?: { list?: unknown } } | null)?.webhooks?.list !== 'function') return;
      const entry: Watched = { client, url, totalFailed: undefined };
      watched.delete(url);
      if (watched.size >= MAX_WATCHED) watched.delete(watched.keys().next().value!);
      watched.set(url, entry);
      entry.totalFailed = (await read(entry))?.totalFailed;
    },
    async corroborates() {
      let seen = false;
      for (const entry of watched.values()) {
        const now = await read(entry);
        if (now === undefined) continue;
        const grew = entry.totalFailed !== undefined && now.totalFailed > entry.totalFailed;
        entry.totalFailed = now.totalFailed;
        const refused =
          now.lastError === undefined || (typeof now.lastError === 'string' && /\b401\b/.test(now.lastError));
        if (grew && refused) seen = true;
      }
      return seen;
    },
  };
}
