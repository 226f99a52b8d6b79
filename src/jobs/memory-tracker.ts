import { optionNames, refuseUnknownOptions } from '../common/options.js';
import { withGetters } from '../common/with-getters.js';
import type { ClaimDueRequest, JobTracker, TrackedJob } from './job-tracker.js';
import { checkTaskId, resolveTrackerTimes, type TrackerTimes } from './options.js';

/** Options of {@link memoryJobTracker}. */
export interface MemoryJobTrackerOptions extends TrackerTimes {
  /** Clock in milliseconds, for tests. Default `Date.now`. */
  now?: () => number;
}

/** The in-memory tracker answers synchronously, and tells how many tasks it holds. */
export interface MemoryJobTracker extends JobTracker {
  track(taskId: string, submittedAt?: number): void;
  settle(taskId: string): void;
  claimDue(request: ClaimDueRequest): readonly TrackedJob[];
  release(taskId: string, owner: string, nextPollAt: number): void;
  pending(options?: { limit?: number }): readonly TrackedJob[];
  /** Tasks tracked. */
  readonly size: number;
}

interface Entry {
  taskId: string;
  submittedAt: number;
  polls: number;
  /** The claimant while claimed. */
  owner: string | undefined;
  /** When it is due again; `undefined` until its first claim (then due `afterMs` after submission). */
  dueAt: number | undefined;
}

const MEMORY_JOB_TRACKER_OPTIONS = optionNames<MemoryJobTrackerOptions>()(['now', 'leaseMs', 'maxAgeMs']);

/**
 * One process's tracker: the tasks this process submitted, polled by this process. It does not
 * survive a restart: use `redisJobTracker` or `postgresJobTracker` when submitter and receiver
 * are different processes, or when a restart must not forget what was submitted.
 */
export function memoryJobTracker(options: MemoryJobTrackerOptions = {}): MemoryJobTracker {
  refuseUnknownOptions(options, MEMORY_JOB_TRACKER_OPTIONS, 'memoryJobTracker');
  const { leaseMs, maxAgeMs } = resolveTrackerTimes('memoryJobTracker', options);
  const now = options.now ?? Date.now;
  // Insertion order is submission order for tasks tracked as they are submitted: `pending` sorts
  // anyway, since `track` may be given an older time.
  const entries = new Map<string, Entry>();
  const view = (entry: Entry): TrackedJob => ({
    taskId: entry.taskId,
    submittedAt: entry.submittedAt,
    polls: entry.polls,
  });

  const tracker: Omit<MemoryJobTracker, 'size'> = {
    leaseMs,
    maxAgeMs,
    track(taskId, submittedAt = now()) {
      checkTaskId(taskId);
      if (entries.has(taskId)) return;
      entries.set(taskId, { taskId, submittedAt, polls: 0, owner: undefined, dueAt: undefined });
    },
    settle(taskId) {
      entries.delete(taskId);
    },
    claimDue({ owner, limit, afterMs, now: at }) {
      const due: { entry: Entry; at: number }[] = [];
      for (const entry of entries.values()) {
        const dueAt = entry.dueAt ?? entry.submittedAt + afterMs;
        if (dueAt <= at) due.push({ entry, at: dueAt });
      }
      due.sort((a, b) => a.at - b.at);
      return due.slice(0, Math.max(0, limit)).map(({ entry }) => {
        entry.owner = owner;
        entry.polls++;
        // The lease: nobody else finds it due until it ends.
        entry.dueAt = at + leaseMs;
        return view(entry);
      });
    },
    release(taskId, owner, nextPollAt) {
      const entry = entries.get(taskId);
      if (!entry || entry.owner !== owner) return;
      entry.owner = undefined;
      entry.dueAt = nextPollAt;
    },
    pending({ limit = 100 } = {}) {
      return [...entries.values()]
        .sort((a, b) => a.submittedAt - b.submittedAt)
        .slice(0, limit)
        .map(view);
    },
  };
  return withGetters(tracker, { size: () => entries.size });
}
