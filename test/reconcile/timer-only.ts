// A process whose only work left is a reconciler's timer (every 60 s): it must exit by itself.
import { memoryJobTracker } from 'jobhook';
import { createReconciler } from '../../src/reconcile/reconciler.js';
import { resolveReconcile } from '../../src/reconcile/options.js';
import { safeLogger } from '../../src/common/logging.js';

createReconciler({
  options: resolveReconcile({
    client: { images: { get: () => Promise.reject(new Error('not called')) } },
    jobs: memoryJobTracker(),
    intervalMs: 60_000,
  }),
  dispatch: () => Promise.resolve('handled'),
  logger: safeLogger(console),
  now: Date.now,
});
console.log('created');
