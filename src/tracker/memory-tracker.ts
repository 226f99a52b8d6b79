import { optionNames, refuseUnknownOptions } from '../common/option-checks.js';
import { IndexedHeap, withGetters } from '../common/structures.js';
import {
  checkTaskId,
  checkTenant,
  resolveTrackerTimes,
  type TrackerTimes,
  type ClaimDueRequest,
  type JobTracker,
  type TrackedJob,
} from './job-tracker.js';

/** Options of {@link memoryJobTracker}. */
export interface MemoryJobTrackerOptions extends TrackerTimes {
  /** Clock in milliseconds, for tests. Default `Date.now`. */
  now?: () => number;
}

/** The in-memory tracker answers synchronously, and tells how many tasks it holds. */
export interface MemoryJobTracker extends JobTracker {
  track(taskId: string, submittedAt?: number, tenant?: string): void;
  settle(taskId: string, tenant?: string): void;
  has(taskId: string, tenant?: string): boolean;
  claimDue(request: ClaimDueRequest): readonly TrackedJob[];
  release(taskId: string, owner: string, nextPollAt: number): void;
  pending(options?: { limit?: number }): readonly TrackedJob[];
  readonly size: number;
}

interface Entry {
  taskId: string;
  submittedAt: number;
  polls: number;
  tenant: string | undefined;
  owner: string | undefined;
  /** When it is due again; `undefined` until its first claim (then due `afterMs` after submission). */
  dueAt: number | undefined;
  order: number;
  agePlace: number;
  duePlace: number;
}

const MEMORY_JOB_TRACKER_OPTIONS = optionNames<MemoryJobTrackerOptions>()(['now', 'leaseMs', 'maxAgeMs']);

/** A time as heaps order it: NaN (never due) after every number, so that the order stays total. */
const key = (time: number) => (Number.isNaN(time) ? Infinity : time);
const earlier = (a: number, aOrder: number, b: number, bOrder: number) =>
  key(a) < key(b) || (key(a) === key(b) && aOrder < bOrder);

/** How many items `Array.prototype.slice(0, limit)` of `size` items would give. */
function sliceCount(limit: number, size: number): number {
  const end = Math.trunc(Number(limit)) || 0;
  return end < 0 ? Math.max(size + end, 0) : Math.min(end, size);
}

/** One process's tracker, gone with a restart; tasks wait in heaps by submission and by when due again. */
export function memoryJobTracker(options: MemoryJobTrackerOptions = {}): MemoryJobTracker {
  refuseUnknownOptions(options, MEMORY_JOB_TRACKER_OPTIONS, 'memoryJobTracker');
  const { leaseMs, maxAgeMs } = resolveTrackerTimes('memoryJobTracker', options);
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  let tracked = 0;
  const bySubmission = (a: Entry, b: Entry) => earlier(a.submittedAt, a.order, b.submittedAt, b.order);
  const duePlace = { get: (e: Entry) => e.duePlace, set: (e: Entry, i: number) => void (e.duePlace = i) };
  const age = new IndexedHeap<Entry>(bySubmission, {
    get: (e) => e.agePlace,
    set: (e, i) => void (e.agePlace = i),
  });
  const fresh = new IndexedHeap<Entry>(bySubmission, duePlace);
  const scheduled = new IndexedHeap<Entry>((a, b) => earlier(a.dueAt!, a.order, b.dueAt!, b.order), duePlace);
  const heapOf = (entry: Entry) => (entry.dueAt === undefined ? fresh : scheduled);

  function setDue(entry: Entry, dueAt: number | undefined) {
    const from = heapOf(entry);
    entry.dueAt = dueAt;
    const to = heapOf(entry);
    if (from === to) {
      if (to === scheduled) scheduled.update(entry);
      return;
    }
    from.remove(entry);
    to.push(entry);
  }

  function firstDue(afterMs: number, at: number): Entry | undefined {
    const neverClaimed = fresh.peek();
    const again = scheduled.peek();
    const freshAt = neverClaimed && neverClaimed.submittedAt + afterMs;
    const freshDue = neverClaimed && freshAt! <= at ? neverClaimed : undefined;
    const againDue = again && again.dueAt! <= at ? again : undefined;
    if (!freshDue || !againDue) return freshDue ?? againDue;
    return earlier(freshAt!, freshDue.order, againDue.dueAt!, againDue.order) ? freshDue : againDue;
  }

  const view = (entry: Entry): TrackedJob => {
    const job = { taskId: entry.taskId, submittedAt: entry.submittedAt, polls: entry.polls };
    return entry.tenant === undefined ? job : { ...job, tenant: entry.tenant };
  };

  const tracker: Omit<MemoryJobTracker, 'size'> = {
    leaseMs,
    maxAgeMs,
    track(taskId, submittedAt = now(), tenant) {
      checkTaskId(taskId);
      checkTenant(tenant);
      if (entries.has(taskId)) return;
      const entry: Entry = {
        taskId,
        submittedAt,
        polls: 0,
        tenant,
        owner: undefined,
        dueAt: undefined,
        order: tracked++,
        agePlace: -1,
        duePlace: -1,
      };
      entries.set(taskId, entry);
      age.push(entry);
      fresh.push(entry);
    },
    settle(taskId, tenant) {
      checkTenant(tenant);
      const entry = entries.get(taskId);
      if (!entry || (tenant !== undefined && entry.tenant !== tenant)) return;
      entries.delete(taskId);
      age.remove(entry);
      heapOf(entry).remove(entry);
    },
    has(taskId, tenant) {
      const entry = entries.get(taskId);
      return entry !== undefined && (tenant === undefined || entry.tenant === tenant);
    },
    claimDue({ owner, limit, afterMs, now: at }) {
      const most = Math.trunc(Math.max(0, limit)) || 0;
      const taken: Entry[] = [];
      for (let entry = firstDue(afterMs, at); entry && taken.length < most; entry = firstDue(afterMs, at)) {
        heapOf(entry).remove(entry);
        taken.push(entry);
      }
      return taken.map((entry) => {
        entry.owner = owner;
        entry.polls++;
        entry.dueAt = at + leaseMs;
        scheduled.push(entry);
        return view(entry);
      });
    },
    release(taskId, owner, nextPollAt) {
      const entry = entries.get(taskId);
      if (!entry || entry.owner !== owner) return;
      entry.owner = undefined;
      setDue(entry, nextPollAt);
    },
    pending({ limit = 100 } = {}) {
      return age.first(sliceCount(limit, entries.size)).map(view);
    },
  };
  return withGetters(tracker, { size: () => entries.size });
}
