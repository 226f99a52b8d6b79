// instance.ts on SQLite: a folder of the test's own holds the database file, shared by every
// receiver process started on it, and each process's records (`effects-<pid>.txt`), read back here.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChild, type Child } from '../many-instances/processes.js';

export const SQLITE_SECRET = `whsec_${Buffer.from('sqlite-instances-secret-32bytes!').toString('base64')}`;

/** One handled outcome, as a receiver process recorded it. */
export interface Effect {
  task: string;
  pid: string;
  source: string;
}

export function sqliteInstances(gateway: { baseUrl: string; apiKey: string }) {
  const dir = mkdtempSync(join(tmpdir(), 'jobhook-sqlite-instances-'));
  const path = join(dir, 'jobhook.db');
  return {
    path,
    /** Starts a receiver on the file, listening on `port`; `env` adds to or overrides the defaults. */
    start: (port: number, env: Record<string, string> = {}): Promise<Child> =>
      startChild('../reconcile/instance.ts', {
        VARIANT: 'sqlite',
        DB_PATH: path,
        RECORDS: dir,
        SECRET: SQLITE_SECRET,
        BASE_URL: gateway.baseUrl,
        API_KEY: gateway.apiKey,
        LEASE_MS: '10000',
        AFTER_MS: '60000',
        INTERVAL_MS: '100',
        PORT: String(port),
        ...env,
      }),
    /** Every outcome handled so far, by every process. */
    effects(): Effect[] {
      return readdirSync(dir)
        .filter((name) => name.startsWith('effects-'))
        .flatMap((name) => readFileSync(join(dir, name), 'utf8').split('\n').filter(Boolean))
        .map((line) => {
          const [task = '', pid = '', source = ''] = line.split(' ');
          return { task, pid, source };
        });
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
