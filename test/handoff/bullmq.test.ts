import { handoffContract } from './contract.js';
import { bullmq } from './engines/bullmq.js';

handoffContract(bullmq, await bullmq.available());
