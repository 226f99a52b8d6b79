// What the simulator holds in memory: its records (snake_case, as the gateway names fields), the
// signal raised when they change, and the background work `settled()` waits for.
import { sleep } from 'jobhook/extend';

export interface Account {
  id: number;
  approved: boolean;
  total_credits: number;
  used_credits: number;
}

export interface ApiKeyRecord {
  id: number;
  account_id: number;
  title: string;
  status: 'created';
  created_at: string;
  api_key: string;
}

/** The simulator's record of a webhook, including its `secret_key`, for assertions. */
export interface WebhookRecord {
  id: number;
  account_id: number;
  url: string;
  events: string[];
  status: 'active';
  api_key_id: number | null;
  created_at: string;
  updated_at: string;
  /** Never part of a response. */
  secret_key: string | undefined;
  total_sent: number;
  total_failed: number;
  last_sent_at: string | null;
  last_error: string | null;
}

export type TaskStatus = 'pending' | 'processing' | 'completed' | 'failed' | 'unknown';

export interface TaskRecord {
  task_id: string;
  account_id: number;
  api_key_id: number;
  model: string;
  prompt: string;
  aspect_ratio: string;
  status: TaskStatus;
  created_at: string;
  updated_at: string;
  image_url?: string;
  error?: { code: string; message: string };
}

export interface GatewayState {
  accounts: Map<number, Account>;
  keys: Map<string, ApiKeyRecord>;
  webhooks: Map<number, WebhookRecord>;
  tasks: Map<string, TaskRecord>;
  nextId(kind: 'account' | 'key' | 'webhook'): number;
}

export function createState(): GatewayState {
  const counters = { account: 0, key: 0, webhook: 0 };
  return {
    accounts: new Map(),
    keys: new Map(),
    webhooks: new Map(),
    tasks: new Map(),
    nextId: (kind) => ++counters[kind],
  };
}

export const nowIso = () => new Date().toISOString();

/**
 * Raised whenever something a watcher (the console) could show has changed; it carries no data,
 * the watcher reads the state again. With no listener it costs a loop over an empty set.
 */
export function changeSignal() {
  const listeners = new Set<() => void>();
  return {
    notify(): void {
      for (const listener of listeners) listener();
    },
    /** Calls `listener` on every change until the returned function is called. */
    subscribe(listener: () => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    get listeners(): number {
      return listeners.size;
    },
  };
}

export type ChangeSignal = ReturnType<typeof changeSignal>;

/**
 * Counts the simulator's background work (automatic jobs, deliveries and their retries), so that
 * a test awaits `gateway.settled()` instead of sleeping and `close()` cancels what is left.
 */
export function activityTracker() {
  let busy = 0;
  let waiters: (() => void)[] = [];
  const controllers = new Set<AbortController>();
  let closed = false;

  function release() {
    busy--;
    if (busy === 0) {
      const done = waiters;
      waiters = [];
      for (const resolve of done) resolve();
    }
  }

  /** A signal aborted when the simulator closes; `dispose` it once no longer needed. */
  function closeSignal(): { signal: AbortSignal; dispose: () => void } {
    const controller = new AbortController();
    if (closed) controller.abort();
    else controllers.add(controller);
    return { signal: controller.signal, dispose: () => controllers.delete(controller) };
  }

  return {
    get closed() {
      return closed;
    },
    /** Runs `task` as tracked work; the simulator is settled only once it ends. */
    async track<T>(task: () => Promise<T>): Promise<T> {
      busy++;
      try {
        return await task();
      } finally {
        release();
      }
    },
    /** Resolves `true` after `ms`, or `false` as soon as the simulator closes. */
    async wait(ms: number): Promise<boolean> {
      const { signal, dispose } = closeSignal();
      try {
        await sleep(ms, signal);
        return true;
      } catch {
        return false;
      } finally {
        dispose();
      }
    },
    closeSignal,
    settled(): Promise<void> {
      return busy === 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve));
    },
    close() {
      closed = true;
      for (const controller of controllers) controller.abort();
      controllers.clear();
    },
  };
}

export type Activity = ReturnType<typeof activityTracker>;
