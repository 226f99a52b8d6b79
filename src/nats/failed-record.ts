import type { HandoffJob } from '../handoff/handoff.js';

/** A failed record's body (on `<subject>.failed`): the job, with what its last attempt said. */
export interface FailedRecord {
  job: HandoffJob;
  error: string;
  attempts: number;
  failedAt: number;
}

/** The header that carries the attempts a retried event had made. */
export const ATTEMPTS_HEADER = 'Jobhook-Attempts';
