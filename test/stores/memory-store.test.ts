// The in-memory store against the shared contract, on a clock the suite moves (no real waiting).
import { memoryDedupeStore } from 'jobhook';
import { storeContract } from './store-contract.js';

let now = 1_000_000;

storeContract({
  make: (times) => memoryDedupeStore({ ...times, now: () => now }),
  pass: async (ms) => {
    now += ms;
  },
});
