// The objects the receiver calls on every delivery must stay fast-mode objects in V8: an object
// literal holding a getter is made a dictionary (a hash lookup per property read, methods
// included) by V8 on Node 20, 22 and 24 alike, and the in-memory store, the results feed and the
// in-flight count each were one (src/common/with-getters.ts says why). What that cost is in
// bench/NOTES.md; this test keeps a new getter from bringing it back.
import { setFlagsFromString } from 'node:v8';
import { runInThisContext } from 'node:vm';
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { memoryDedupeStore } from 'jobhook';
import { sqliteDedupeStore, sqliteJobTracker } from 'jobhook/sqlite';
import { withGetters } from '../../src/common/structures.js';
import { inFlightTracker } from '../../src/receiver/in-flight.js';
import { jobResults } from '../../src/results/job-results.js';
import { memoryJobTracker } from '../../src/tracker/memory-tracker.js';
import { timerQueue } from '../../src/client/wait-for.js';

setFlagsFromString('--allow-natives-syntax');
// Compiled after the flag is set: `%HasFastProperties` is V8's own test of an object's mode.
const hasFastProperties = runInThisContext('(object) => %HasFastProperties(object)') as (
  object: object,
) => boolean;

const sqliteDir = mkdtempSync(join(tmpdir(), 'jobhook-fast-objects-'));
afterAll(() => rmSync(sqliteDir, { recursive: true, force: true }));
const sqliteFile = () => join(sqliteDir, 'jobhook.db');

describe('objects read on every delivery keep fast properties', () => {
  it('tells a literal with a getter (a dictionary) from one without', () => {
    let count = 1;
    expect(hasFastProperties({ count: () => count })).toBe(true);
    expect(
      hasFastProperties({
        get count() {
          return count;
        },
        add() {
          count++;
        },
      }),
    ).toBe(false);
    const made = withGetters({ add: () => count++ }, { count: () => count });
    expect(hasFastProperties(made)).toBe(true);
    made.add();
    expect(made.count).toBe(2);
    expect(Object.keys(made)).toEqual(['add', 'count']);
  });

  it.each([
    ['memoryDedupeStore()', () => memoryDedupeStore()],
    ['the in-flight count', () => inFlightTracker()],
    ['the job results feed', () => jobResults(undefined, console)],
    ['memoryJobTracker()', () => memoryJobTracker()],
    ['the timer queue', () => timerQueue()],
    ['sqliteDedupeStore()', () => sqliteDedupeStore({ path: sqliteFile() })],
    ['sqliteJobTracker()', () => sqliteJobTracker({ path: sqliteFile() })],
  ])('%s', (_name, make) => {
    const made = make();
    expect(hasFastProperties(made)).toBe(true);
  });

  it('the getters still read the live value', () => {
    const store = memoryDedupeStore();
    expect(store.size).toBe(0);
    store.claim('k', 'o');
    expect(store.size).toBe(1);
    const tracker = inFlightTracker();
    tracker.enter();
    expect(tracker.pending).toBe(1);
    expect(tracker.closing).toBe(false);
  });
});
